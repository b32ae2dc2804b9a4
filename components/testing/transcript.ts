import fc from "fast-check";
import type { TranscriptEvent, TranscriptPayload } from "../api-types";

// Random session logs for the transcript's property tests (test-only).

const turnIds = ["turn_a", "turn_b"];
const reasons = ["completed", "aborted", "error", "interrupted", "budget"] as const;
const sources = [{ kind: "human" as const, name: "Ana" }, { kind: "system" as const }, { kind: "runtime_context" as const }];
// Any sequence of these, realistic or not: the property is that batching never changes the result.
const payload: fc.Arbitrary<TranscriptPayload> = fc.record({ kind: fc.nat(9), turn: fc.constantFrom(...turnIds), step: fc.nat(2), n: fc.nat(3), text: fc.constantFrom("", "a", "bc ") }).map(({ kind, turn, step, n, text }): TranscriptPayload => {
  switch (kind) {
    case 0: return { kind: "turn_start", turnId: turn };
    case 1: return { kind: "step_start", turnId: turn, step };
    case 2: return { kind: "model_wait", turnId: turn, step, wait: n === 0 ? { kind: "provider" } : { kind: "retry", attempt: n, delayMs: 100 * n, reason: `${500 + n} busy` } };
    case 3:
    case 4: return { kind: "assistant_delta", turnId: turn, step, text: text || "x" };
    case 5: return {
      kind: "assistant_message", messageId: `m_${turn}_${step}_${n}`, turnId: turn, step, model: "x", text,
      toolCalls: n === 0 ? [{ toolCallId: "c", toolName: "workspace_write", input: {} }] : [], usage: { inputTokens: 1, outputTokens: 1 }, interrupted: n === 1,
    };
    case 6: return { kind: "tool_result", turnId: turn, toolCallId: "c", toolName: "workspace_write", output: { path: "a.md", version: n + 1 }, isError: n === 3 };
    case 7: return { kind: "user_message", messageId: `u_${n}`, text, source: sources[n % sources.length]! };
    case 8: return n === 0 ? { kind: "compaction", throughSeq: 1, summaryMessageId: "s" } : { kind: "step_end", turnId: turn, step };
    default: return { kind: "turn_end", turnId: turn, reason: reasons[n % reasons.length]!, ...(n === 2 ? { error: "boom" } : {}) };
  }
});
export const history = fc.array(payload, { maxLength: 120 }).map((ps) => ps.map((p, i): TranscriptEvent => ({ seq: i + 1, createdAt: new Date(1_000 * (i + 1)), payload: p })));
