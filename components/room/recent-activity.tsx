import { RelativeTime } from "../ui/relative-time";
import { describeAction, personNames } from "./activity";
import type { MemberView, PersonAction, TeamPerson } from "../api-types";

/** The latest human actions in the team, newest first: who prompted, stopped, edited, removed. */
export function RecentActivity({
  actions,
  members,
  people,
  limit = 15,
}: {
  actions: PersonAction[];
  members: MemberView[];
  people: TeamPerson[];
  limit?: number;
}) {
  const names = personNames(people, actions);
  return (
    <section aria-label="Recent activity" className="activity">
      <h2>Recent activity</h2>
      {actions.length === 0 && <p className="muted">Nothing yet.</p>}
      <ol>
        {actions.slice(0, limit).map((a) => (
          <li key={a.id}>
            <span>{describeAction(a, members, names)}</span>{" "}
            <RelativeTime className="muted" at={a.createdAt} />
          </li>
        ))}
      </ol>
    </section>
  );
}
