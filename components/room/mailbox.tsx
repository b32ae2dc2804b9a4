import type { TeamMessageView } from "../api-types";
import { RelativeTime } from "../ui/relative-time";

/** Every team message with sender → target and its state: queued → delivered → consumed. */
export function Mailbox({ messages }: { messages: TeamMessageView[] }) {
  return (
    <section aria-label="Mailbox" className="mailbox">
      <h2>Mailbox</h2>
      {messages.length === 0 && <p className="muted">No team messages yet.</p>}
      <ol>
        {[...messages].reverse().map((m) => (
          <li key={m.id} className="mail" aria-label={`Message from ${m.senderName} to ${m.targetName}: ${m.state}`}>
            <div className="mail-head">
              <span>
                {m.senderName} → {m.targetName}
              </span>
              <span className={`badge badge-${m.state}`}>{m.state}</span>
            </div>
            <div className="mail-body">{m.content}</div>
            <div className="muted mail-times">
              queued <RelativeTime at={m.createdAt} />
              {m.deliveredAt && (
                <>
                  {" "}
                  · delivered <RelativeTime at={m.deliveredAt} />
                </>
              )}
              {m.consumedAt && (
                <>
                  {" "}
                  · read <RelativeTime at={m.consumedAt} />
                </>
              )}
            </div>
          </li>
        ))}
      </ol>
    </section>
  );
}
