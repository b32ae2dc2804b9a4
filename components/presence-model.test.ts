import { describe, expect, it } from "vitest";
import type { MemberView, PresenceView } from "./api-types";
import { peopleInRoom } from "./presence-model";

const members = [
  { name: "lead", sessionId: "ses_team" },
  { name: "researcher", sessionId: "ses_r" },
] as MemberView[];

const tab = (clientId: string, userId: string, name: string, watching: string | null, typingTo: string | null = null): PresenceView => ({
  clientId,
  userId,
  name,
  watching,
  typingTo,
});

describe("peopleInRoom", () => {
  it("shows one entry per person however many tabs they have, with every agent they watch and type to", () => {
    const people = peopleInRoom(
      [
        tab("a1", "u_ana", "Ana", "ses_team"),
        tab("a2", "u_ana", "Ana", "ses_r", "ses_r"),
        tab("a3", "u_ana", "Ana", "ses_team"),
        tab("b1", "u_bob", "Bob", "ses_r"),
      ],
      members,
    );
    expect(people).toEqual([
      { userId: "u_ana", name: "Ana", watching: ["lead", "researcher"], typingTo: ["researcher"] },
      { userId: "u_bob", name: "Bob", watching: ["researcher"], typingTo: [] },
    ]);
  });

  it("leaves out agents it cannot name (a session not in the roster yet)", () => {
    expect(peopleInRoom([tab("c1", "u_c", "Carol", "ses_unknown", "ses_unknown")], members)).toEqual([
      { userId: "u_c", name: "Carol", watching: [], typingTo: [] },
    ]);
  });
});
