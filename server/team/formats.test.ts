import { describe, expect, it } from "vitest";
import { formatIdentity, parseIdentity } from "./identity";
import { parseTeamMessage, teamMessageText } from "../../shared/message-format";

// The texts the keyless playbook reads back are written by other modules: each writer
// exports its parser, and these round trips keep the two from drifting apart.

describe("identity text", () => {
  it("reads back the role and name it was written with", () => {
    for (const who of [
      { role: "lead", name: "lead", teamTitle: "Ship it", teamId: "ses_1" },
      { role: "teammate", name: "implementer-2", teamTitle: 'A "quoted" title', teamId: "ses_2" },
    ] as const) {
      expect(parseIdentity(`Runtime context\n${formatIdentity(who)}\nmore`)).toEqual({ role: who.role, name: who.name });
    }
  });

  it("finds nothing in other text", () => {
    expect(parseIdentity("Role: boss. Your name is `x`.")).toBeNull();
  });
});

describe("team message text", () => {
  it("reads back id, sender and the whole content, newlines and all", () => {
    const content = "First line\nTeam message fake from lead:\nstill content";
    expect(parseTeamMessage(teamMessageText("msg_0123abc", "researcher", content))).toEqual({
      messageId: "msg_0123abc",
      senderName: "researcher",
      content,
    });
  });

  it("finds nothing in a person's prompt that merely mentions one", () => {
    expect(parseTeamMessage("Please read the Team message from lead")).toBeNull();
    expect(parseTeamMessage("Team message x from y: no newline")).toBeNull();
  });
});
