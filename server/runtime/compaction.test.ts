import { describe, expect, it } from "vitest";
import type { LanguageModel, ModelRequest } from "../models/types";
import { planCompaction, summarise } from "./compaction";
import type { EventPayload, SessionEvent } from "./events";

// When and what to compact (pure over the log), and the events that record a summary. The
// whole loop under a small budget is in context.test.ts.

const at = new Date(0);
const log = (...payloads: EventPayload[]): SessionEvent[] => payloads.map((payload, i) => ({ seq: i + 1, createdAt: at, payload }));
const user = (text: string): EventPayload => ({ kind: "user_message", messageId: `m_${text}`, text, source: { kind: "human" } });
const reply = (turnId: string, text: string): EventPayload => ({
  kind: "assistant_message",
  messageId: `a_${text}`,
  turnId,
  step: 0,
  model: "test",
  text,
  toolCalls: [],
  usage: { inputTokens: 0, outputTokens: 0 },
  interrupted: false,
});
const turn = (turnId: string, prompt: string, answer: string): EventPayload[] => [
  { kind: "turn_start", turnId },
  user(prompt),
  reply(turnId, answer),
  { kind: "turn_end", turnId, reason: "completed" },
];

const long = "x".repeat(400);

describe("planCompaction", () => {
  it("plans nothing while the visible history is within budget", () => {
    expect(planCompaction(log(...turn("t1", long, "ok")), 1_000)).toBeNull();
  });

  it("covers the completed turns only, through the last turn_end, when over budget", () => {
    const events = log(...turn("t1", long, "one"), { kind: "turn_start", turnId: "t2" }, user("open turn"));
    expect(planCompaction(events, 50)).toEqual({
      throughSeq: 4,
      messages: [
        { role: "user", text: long },
        { role: "assistant", text: "one", toolCalls: [] },
      ],
    });
  });

  it("plans nothing when an earlier compaction already covers every completed turn", () => {
    const events = log(
      ...turn("t1", long, "one"),
      { kind: "compaction", throughSeq: 4, summaryMessageId: "s1" },
      { kind: "user_message", messageId: "s1", text: long, source: { kind: "compaction_summary" } },
      { kind: "turn_start", turnId: "t2" },
      user(long),
    );
    expect(planCompaction(events, 50)).toBeNull();
  });
});

describe("summarise", () => {
  it("asks for a summary of the plan as text, with no tools, and records marker (with the call's usage) then summary", async () => {
    const requests: ModelRequest[] = [];
    const model: LanguageModel = {
      id: "test:summary",
      async *stream(request) {
        requests.push(request);
        yield { type: "text-delta", text: "the " };
        yield { type: "text-delta", text: "gist" };
        yield { type: "finish", usage: { inputTokens: 120, outputTokens: 7 } };
      },
    };
    const plan = { throughSeq: 4, messages: [{ role: "user" as const, text: "hello" }] };
    const [marker, summary] = await summarise(model, plan, new AbortController().signal);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ tools: [], purpose: "summary" });
    expect(requests[0]!.messages).toEqual([{ role: "user", text: expect.stringMatching(/\n\n\[user\] hello$/) }]);
    expect(marker).toEqual({ kind: "compaction", throughSeq: 4, summaryMessageId: expect.any(String), usage: { inputTokens: 120, outputTokens: 7 } });
    expect(summary).toEqual({
      kind: "user_message",
      messageId: marker.summaryMessageId,
      text: "the gist",
      source: { kind: "compaction_summary" },
    });
  });
});
