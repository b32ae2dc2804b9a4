import { describe, expect, it } from "vitest";
import { asTurnId } from "../ids";
import type { ToolCall } from "../models/types";
import type { EventPayload, SessionEvent } from "./events";
import { unansweredToolCalls } from "./turn-close";

// Which tool calls of a turn a closing driver must recover (pure over the log). Closing turns
// against a database, crashes included, is in recovery.test.ts and interrupt.test.ts.

const at = new Date(0);
const log = (...payloads: EventPayload[]): SessionEvent[] => payloads.map((payload, i) => ({ seq: i + 1, createdAt: at, payload }));
const call = (toolCallId: string): ToolCall => ({ toolCallId, toolName: "t", input: {} });
const reply = (turnId: string, messageId: string, ...calls: ToolCall[]): EventPayload => ({
  kind: "assistant_message",
  messageId,
  turnId,
  step: 0,
  model: "test",
  text: "",
  toolCalls: calls,
  usage: { inputTokens: 0, outputTokens: 0 },
  interrupted: false,
});
const result = (turnId: string, toolCallId: string): EventPayload => ({
  kind: "tool_result",
  turnId,
  toolCallId,
  toolName: "t",
  output: {},
  isError: false,
});

describe("unansweredToolCalls", () => {
  it("matches results within their own reply: model call ids repeat across replies", () => {
    const t = asTurnId("turn_1");
    const events = log(
      { kind: "turn_start", turnId: t },
      reply(t, "m1", call("c1"), call("c2")),
      result(t, "c1"),
      result(t, "c2"),
      reply(t, "m2", call("c1"), call("c2")),
      result(t, "c2"),
    );
    expect(unansweredToolCalls(events, t)).toEqual([{ messageId: "m2", call: call("c1") }]);
  });

  it("looks at the given turn only", () => {
    const t1 = asTurnId("turn_1");
    const t2 = asTurnId("turn_2");
    const events = log(
      { kind: "turn_start", turnId: t1 },
      reply(t1, "m1", call("c1")),
      { kind: "turn_end", turnId: t1, reason: "interrupted" },
      { kind: "turn_start", turnId: t2 },
      reply(t2, "m2", call("c9")),
    );
    expect(unansweredToolCalls(events, t2)).toEqual([{ messageId: "m2", call: call("c9") }]);
    expect(unansweredToolCalls(events, t1)).toEqual([{ messageId: "m1", call: call("c1") }]);
  });

  it("finds nothing when every call has its result", () => {
    const t = asTurnId("turn_1");
    expect(unansweredToolCalls(log({ kind: "turn_start", turnId: t }, reply(t, "m1", call("c1")), result(t, "c1")), t)).toEqual([]);
  });
});
