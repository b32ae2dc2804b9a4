import { describe, expect, it } from "vitest";
import { describeAction, personNames } from "./activity";
import type { MemberView, PersonAction, TeamPerson } from "../api-types";

const member = (name: string, sessionId: string) => ({ name, sessionId }) as MemberView;
const members = [member("lead", "ses_team"), member("researcher", "ses_r")];

let n = 0;
function action(userName: string, kind: PersonAction["action"], at: { sessionId?: string; detail?: Record<string, unknown>; userId?: string } = {}): PersonAction {
  n += 1;
  return {
    id: String(n),
    sessionId: at.sessionId ?? null,
    userId: at.userId ?? `u_${userName}`,
    userName,
    action: kind,
    detail: at.detail ?? {},
    createdAt: new Date(0),
  };
}

describe("describeAction", () => {
  const people: TeamPerson[] = [{ userId: "u_Ana", name: "Ana", email: "a@x.test", role: "owner", joinedAt: new Date(0) }];

  it("names the person and the agent or task acted on", () => {
    const names = personNames(people, []);
    expect(describeAction(action("Bob", "queue_removed", { sessionId: "ses_team" }), members, names)).toBe("Bob removed a queued prompt for lead");
    expect(describeAction(action("Carol", "stop", { sessionId: "ses_r" }), members, names)).toBe("Carol pressed Stop on researcher");
    expect(describeAction(action("Ana", "task_changed", { detail: { taskId: "task-3", action: "claim" } }), members, names)).toBe("Ana claimed task-3");
    expect(describeAction(action("Ana", "task_changed", { detail: { taskId: "task-4", action: "something-new" } }), members, names)).toBe("Ana changed task-4");
    expect(describeAction(action("Ana", "teammate_added", { detail: { name: "tester" } }), members, names)).toBe("Ana added teammate tester");
    expect(describeAction(action("Bob", "fork", { sessionId: "ses_team", detail: { forkId: "ses_f" } }), members, names)).toBe(
      "Bob forked lead into a new team",
    );
  });

  it("names the person a people action was about, even after they left the team", () => {
    const joined = action("Dan", "joined", { userId: "u_dan", detail: { role: "viewer" } });
    const removed = action("Ana", "person_removed", { userId: "u_Ana", detail: { userId: "u_dan" } });
    const actions = [removed, joined]; // newest first, as the server sends them
    const names = personNames(people, actions);
    expect(describeAction(joined, members, names)).toBe("Dan joined as a viewer");
    expect(describeAction(removed, members, names)).toBe("Ana removed Dan from the team");
    expect(describeAction(action("Ana", "role_changed", { detail: { userId: "u_zed", to: "owner" } }), members, names)).toBe(
      "Ana made someone an owner",
    );
  });
});
