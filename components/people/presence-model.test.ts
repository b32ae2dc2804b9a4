import { describe, expect, it } from "vitest";
import type { MemberView, PresenceView } from "../api-types";
import { peopleInRoom } from "./presence-model";

const members = [
  { name: "lead", sessionId: "ses_team" },
  { name: "researcher", sessionId: "ses_r" },
] as MemberView[];

const tab = (clientId: string, userId: string, name: string, watching: string | null, more: Partial<PresenceView> = {}): PresenceView => ({
  clientId,
  userId,
  name,
  watching,
  typingTo: null,
  place: "agent",
  file: null,
  editing: null,
  ...more,
});

describe("peopleInRoom", () => {
  it("shows one entry per person however many tabs they have, with every place and every thing they do", () => {
    const people = peopleInRoom(
      [
        tab("a1", "u_ana", "Ana", "ses_team"),
        tab("a2", "u_ana", "Ana", "ses_r", { typingTo: "ses_r" }),
        tab("a3", "u_ana", "Ana", "ses_team"),
        tab("b1", "u_bob", "Bob", "ses_r"),
      ],
      members,
    );
    expect(people).toEqual([
      { userId: "u_ana", name: "Ana", where: ["watching lead", "watching researcher"], doing: ["typing to researcher"] },
      { userId: "u_bob", name: "Bob", where: ["watching researcher"], doing: [] },
    ]);
  });

  it("says where outside the agent view: timeline, split view, a file in Files, the board; and what is being edited", () => {
    const people = peopleInRoom(
      [
        tab("a1", "u_ana", "Ana", "ses_team", { place: "timeline" }),
        tab("a2", "u_ana", "Ana", "ses_team", { place: "files", file: "src/a.md", editing: { kind: "file", path: "src/a.md" } }),
        tab("b1", "u_bob", "Bob", "ses_team", { place: "board", editing: { kind: "task", taskId: "task-3" } }),
        tab("c1", "u_cy", "Cy", "ses_team", { place: "split" }),
        tab("c2", "u_cy", "Cy", null, { place: "files" }),
      ],
      members,
    );
    expect(people).toEqual([
      { userId: "u_ana", name: "Ana", where: ["on the timeline", "in Files: src/a.md"], doing: ["editing src/a.md"] },
      { userId: "u_bob", name: "Bob", where: ["on the board"], doing: ["editing task-3"] },
      { userId: "u_cy", name: "Cy", where: ["in the split view", "in Files"], doing: [] },
    ]);
  });

  it("leaves out agents it cannot name (a session not in the roster yet)", () => {
    expect(peopleInRoom([tab("c1", "u_c", "Carol", "ses_unknown", { typingTo: "ses_unknown" })], members)).toEqual([
      { userId: "u_c", name: "Carol", where: [], doing: [] },
    ]);
  });
});
