import { describe, expect, it } from "vitest";
import type { MessageSource, SessionEvent } from "./events";
import { toModelMessages } from "./history";
import { parseHumanPrompt } from "./human-prompt";

// What the model reads of a person's prompt (docs/SPEC.md §13 Attribution): the history
// builder puts "From <display name>:" on the first line; the log keeps the text as typed.

const message = (seq: number, text: string, source: MessageSource): SessionEvent => ({
  seq,
  createdAt: new Date(0),
  payload: { kind: "user_message", messageId: `msg_${seq}`, text, source },
});

describe("a human prompt in the model's history", () => {
  it("starts with who wrote it, one line, then the text as typed", () => {
    const [first, second] = toModelMessages([
      message(1, "Plan the picnic\nfor six", { kind: "human", userId: "u_bob", name: "Bob Member" }),
      message(2, "Bring cake", { kind: "human", userId: "u_ana", name: "Ana" }),
    ]);
    expect(first).toEqual({ role: "user", text: "From Bob Member:\nPlan the picnic\nfor six" });
    expect(second).toEqual({ role: "user", text: "From Ana:\nBring cake" });
    expect(parseHumanPrompt(first?.role === "user" ? first.text : "")).toEqual({ from: "Bob Member", body: "Plan the picnic\nfor six" });
  });

  it("adds no header to team mail, system notices, or a human prompt with no name (older rows)", () => {
    const messages = toModelMessages([
      message(1, "hello", { kind: "team", teamId: "ses_t", messageId: "tm_1", senderSessionId: "ses_r", senderName: "researcher" }),
      message(2, "resume notice", { kind: "system" }),
      message(3, "typed before accounts", { kind: "human" }),
    ]);
    expect(messages.map((m) => (m.role === "user" ? m.text : null))).toEqual(["hello", "resume notice", "typed before accounts"]);
  });
});
