import type { MemberView, PresenceView } from "./api-types";
import { peopleInRoom } from "./presence-model";

// Who is in the room now: one chip per person (a person may have several tabs open), with the
// agents they are watching and typing to.

export function PresenceBar({ presence, members, meId }: { presence: PresenceView[]; members: MemberView[]; meId: string | null }) {
  const people = peopleInRoom(presence, members);
  return (
    <section className="presence" aria-label="In the room">
      <span className="label">In the room</span>
      <ul aria-label="People in the room">
        {people.map((p) => {
          const parts = [
            p.watching.length > 0 ? `watching ${p.watching.join(", ")}` : null,
            p.typingTo.length > 0 ? `typing to ${p.typingTo.join(", ")}` : null,
          ].filter((x) => x !== null);
          const name = `${p.name}${p.userId === meId ? " (you)" : ""}`;
          return (
            <li key={p.userId} className={`chip${p.typingTo.length > 0 ? " typing" : ""}`} aria-label={[name, ...parts].join(", ")}>
              <strong>{name}</strong>
              {parts.map((part) => (
                <span key={part} className="muted">
                  {" "}
                  · {part}
                </span>
              ))}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
