import type { MemberView, PresenceView } from "../api-types";
import { peopleInRoom } from "./presence-model";

// Who is in the room now: one line per person (a person may have several tabs open), saying
// where they are and what they are doing.

export function PresenceList({ presence, members, meId }: { presence: PresenceView[]; members: MemberView[]; meId: string | null }) {
  const people = peopleInRoom(presence, members);
  return (
    <section className="presence" aria-labelledby="presence-title">
      <h2 id="presence-title">Here now</h2>
      <ul aria-label="People in the room">
        {people.map((p) => {
          const parts = [...p.where, ...p.doing];
          const name = `${p.name}${p.userId === meId ? " (you)" : ""}`;
          return (
            <li key={p.userId} className={`here${p.doing.length > 0 ? " busy" : ""}`} aria-label={[name, ...parts].join(", ")}>
              <strong>{name}</strong>
              {parts.map((part) => (
                <span key={part} className="muted here-where">
                  {part}
                </span>
              ))}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
