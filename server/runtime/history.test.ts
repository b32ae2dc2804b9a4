import { describe, expect, it } from "vitest";
import { estimateUsage } from "../models/estimate";
import type { ModelMessage } from "../models/types";
import type { EventPayload, MessageSource, SessionEvent } from "./events";
import { REPLY_CUT_OFF, TURN_STOPPED } from "./config";
import { ModelHistory, toModelMessages, visibleEvents } from "./history";

// The driver's incremental view of its log (ModelHistory) must say exactly what the projections
// recomputed from the whole log say, after every append: in order, sorted in out of order, and
// across a compaction.

const at = new Date(0);
const user = (text: string, source: MessageSource = { kind: "human" }): EventPayload => ({
  kind: "user_message",
  messageId: `m_${text}`,
  text,
  source,
});
const reply = (text: string, calls: string[] = []): EventPayload => ({
  kind: "assistant_message",
  messageId: `a_${text}`,
  turnId: "t",
  step: 0,
  model: "test",
  text,
  toolCalls: calls.map((id) => ({ toolCallId: id, toolName: "current_time", input: { id } })),
  usage: { inputTokens: 0, outputTokens: 0 },
  interrupted: false,
});
const result = (id: string): EventPayload => ({ kind: "tool_result", turnId: "t", toolCallId: id, toolName: "current_time", output: { now: id }, isError: false });

/** What the model is sent, recomputed from the whole log (the reference). */
function reference(events: SessionEvent[]) {
  const visible = visibleEvents(events);
  const messages = toModelMessages(visible);
  let chars = 0;
  for (const m of messages) chars += m.role === "user" ? m.text.length : m.role === "assistant" ? m.text.length + JSON.stringify(m.toolCalls).length : JSON.stringify(m.results).length;
  let snapshot: string | null = null;
  for (const e of visible) if (e.payload.kind === "user_message" && e.payload.source.kind === "runtime_context") snapshot = e.payload.text;
  return { messages, tokens: Math.ceil(chars / 4), snapshot };
}

function expectSame(history: ModelHistory, events: SessionEvent[]) {
  const want = reference(events);
  expect(history.messages(events)).toEqual(want.messages);
  expect(history.estimatedTokens(events)).toBe(want.tokens);
  expect(history.retainedContextSnapshot(events)).toBe(want.snapshot);
}

const script: EventPayload[] = [
  { kind: "turn_start", turnId: "t" },
  user("hello"),
  user("ctx 1", { kind: "runtime_context" }),
  reply("calling", ["c1", "c2"]),
  result("c1"),
  result("c2"),
  reply("", []),
  reply("again", ["c3"]),
  user("steer while c3 is open"),
  { kind: "turn_end", turnId: "t", reason: "completed" },
  user("named", { kind: "human", name: "Ada" }),
  user("ctx 2", { kind: "runtime_context" }),
  { kind: "compaction", throughSeq: 10, summaryMessageId: "m_the summary" },
  user("the summary", { kind: "compaction_summary" }),
  reply("after the summary", ["c4"]),
  result("c4"),
  { kind: "turn_end", turnId: "t", reason: "aborted" },
];

describe("ModelHistory", () => {
  it("matches the projections of the whole log after every append, one event or several at a time", () => {
    for (const batch of [1, 2, 3]) {
      const history = new ModelHistory();
      const events: SessionEvent[] = [];
      for (let i = 0; i < script.length; i += batch) {
        events.push(...script.slice(i, i + batch).map((payload, k) => ({ seq: i + k + 1, createdAt: at, payload })));
        expectSame(history, events);
      }
    }
  });

  it("starts over when an event is sorted in before ones it had folded in", () => {
    const history = new ModelHistory();
    const all = script.slice(0, 8).map((payload, i) => ({ seq: i + 1, createdAt: at, payload }));
    // seq 5 and 6 (c1's and c2's results) answered after 7 and 8 had been read.
    const events = [...all.slice(0, 4), ...all.slice(6)];
    expectSame(history, events);
    events.push(all[4]!, all[5]!);
    events.sort((a, b) => a.seq - b.seq);
    expectSame(history, events);
    expect(history.messages(events)[3]).toMatchObject({ role: "tool", results: [{ isError: false }, { isError: false }] });
  });

  it("gives a new array each time, so a step's request is not changed by the next events", () => {
    const history = new ModelHistory();
    const events: SessionEvent[] = [{ seq: 1, createdAt: at, payload: user("one") }];
    const first = history.messages(events);
    events.push({ seq: 2, createdAt: at, payload: user("two") });
    expect(history.messages(events)).toHaveLength(2);
    expect(first).toHaveLength(1);
  });
});

describe("toModelMessages", () => {
  it("tells the model a reply was cut off, and that the turn was stopped (a crash is not a stop)", () => {
    const cut: EventPayload = { ...(reply("half a sent", ["c9"]) as Extract<EventPayload, { kind: "assistant_message" }>), interrupted: true };
    const log = (reason: "aborted" | "interrupted") =>
      toModelMessages([user("go"), cut, { kind: "turn_end" as const, turnId: "t", reason }].map((payload, i) => ({ seq: i + 1, createdAt: at, payload })));
    const stopped = log("aborted");
    expect(stopped.map((m) => (m.role === "tool" ? "tool" : m.text))).toEqual(["go", `half a sent${REPLY_CUT_OFF}`, "tool", TURN_STOPPED]);
    expect(stopped[2]).toMatchObject({ role: "tool", results: [{ isError: true, output: { error: { code: "INTERRUPTED" } } }] });
    expect(log("interrupted").map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
  });
});

describe("estimateUsage", () => {
  it("counts the request as JSON.stringify would, tools included, with messages measured once", () => {
    const messages: ModelMessage[] = [
      { role: "user", text: "hé \"quoted\" \n" },
      { role: "assistant", text: "", toolCalls: [{ toolCallId: "c", toolName: "x", input: { a: [1, null] } }] },
      { role: "tool", results: [{ toolCallId: "c", toolName: "x", output: { ok: true }, isError: false }] },
    ];
    for (const n of [0, 1, 3]) {
      const tools = [{ name: "x", description: "does x", inputSchema: { type: "object" } }];
      const request = { system: "sys", messages: messages.slice(0, n), tools, purpose: "step" as const };
      const want = Math.ceil((request.system + JSON.stringify(tools) + JSON.stringify(request.messages)).length / 4);
      expect(estimateUsage(request, { text: "" }).inputTokens).toBe(want);
      expect(estimateUsage(request, { text: "" }).inputTokens).toBe(want);
    }
  });
});
