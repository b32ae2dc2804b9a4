import fc from "fast-check";
import type { TranscriptEvent, TranscriptPayload } from "../api-types";
import { fileOfTool, type TranscriptItem } from "../transcript-model";

// Random session logs for the transcript's property tests, and the fold they are checked
// against (test-only).

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

// The transcript fold as it was before it became incremental (re-folding the whole log per
// batch), kept only as the reference `transcript-model.test.ts` checks `extendFold` against on
// random logs. Not used by the app.

export function referenceFold(events: readonly TranscriptEvent[]): TranscriptItem[] {
  const items: TranscriptItem[] = [];
  // The reply being streamed for (turn, step), if any, as an index into items.
  let streamingAt: { turnId: string; step: number; index: number } | null = null;
  // The step's wait line while it is live, as an index into items.
  let waitingAt: { turnId: string; step: number; index: number } | null = null;
  // Wait lines of steps that were never retried: gone once the step moves on.
  const dropped = new Set<number>();
  const settleWait = (byTurnEnd: boolean) => {
    const cur = waitingAt && items[waitingAt.index];
    if (waitingAt && cur?.kind === "wait") {
      if (cur.retries === 0) dropped.add(waitingAt.index);
      else items[waitingAt.index] = { ...cur, live: false, endedWaiting: byTurnEnd && cur.wait.kind === "retry" };
    }
    waitingAt = null;
  };

  for (const e of events) {
    const p = e.payload;
    if (waitingAt && (p.kind === "assistant_delta" || p.kind === "assistant_message" || p.kind === "turn_end" || p.kind === "step_start")) {
      // Ended during the wait: the turn's end, or the empty reply a Stop records first.
      settleWait(p.kind === "turn_end" || (p.kind === "assistant_message" && p.interrupted && p.text === "" && p.toolCalls.length === 0));
    }
    switch (p.kind) {
      case "model_wait": {
        const retry = p.wait.kind === "retry" ? p.wait : null;
        const cur = waitingAt && waitingAt.turnId === p.turnId && waitingAt.step === p.step ? items[waitingAt.index] : null;
        if (cur?.kind === "wait") {
          items[waitingAt!.index] = { ...cur, wait: p.wait, waitSeq: e.seq, retries: cur.retries + (retry ? 1 : 0), reason: retry?.reason ?? cur.reason };
        } else {
          waitingAt = { turnId: p.turnId, step: p.step, index: items.length };
          items.push({ kind: "wait", key: `wait-${e.seq}`, seq: e.seq, live: true, wait: p.wait, waitSeq: e.seq, retries: retry ? 1 : 0, reason: retry?.reason ?? null });
        }
        break;
      }
      case "user_message":
        items.push({ kind: "user", key: p.messageId, seq: e.seq, text: p.text, source: p.source });
        break;
      case "assistant_delta": {
        const cur = streamingAt && streamingAt.turnId === p.turnId && streamingAt.step === p.step ? items[streamingAt.index] : null;
        if (cur && cur.kind === "assistant") cur.text += p.text;
        else {
          streamingAt = { turnId: p.turnId, step: p.step, index: items.length };
          items.push({ kind: "assistant", key: `stream-${e.seq}`, seq: e.seq, text: p.text, streaming: true, interrupted: false, toolCalls: [] });
        }
        break;
      }
      case "assistant_message": {
        const final: TranscriptItem = {
          kind: "assistant",
          key: p.messageId,
          seq: e.seq,
          text: p.text,
          streaming: false,
          interrupted: p.interrupted,
          toolCalls: p.toolCalls,
        };
        if (streamingAt && streamingAt.turnId === p.turnId && streamingAt.step === p.step) {
          items[streamingAt.index] = { ...final, key: items[streamingAt.index]!.key };
        } else items.push(final);
        streamingAt = null;
        break;
      }
      case "tool_result":
        items.push({
          kind: "tool",
          key: `tool-${e.seq}`,
          seq: e.seq,
          toolName: p.toolName,
          output: p.output,
          isError: p.isError,
          errorCode: p.errorCode,
          ...fileOfTool(p.toolName, p.isError, p.output),
        });
        break;
      case "compaction":
        items.push({ kind: "compaction", key: `compaction-${e.seq}`, seq: e.seq, throughSeq: p.throughSeq });
        break;
      case "turn_end":
        // A reply still "streaming" when its turn ended was cut off.
        if (streamingAt) {
          const cur = items[streamingAt.index];
          if (cur?.kind === "assistant") items[streamingAt.index] = { ...cur, streaming: false, interrupted: true };
          streamingAt = null;
        }
        if (p.reason !== "completed") {
          items.push({ kind: "turn_end", key: `end-${e.seq}`, seq: e.seq, reason: p.reason, error: p.error, at: e.createdAt });
        }
        break;
      default:
        break;
    }
  }
  return dropped.size === 0 ? items : items.filter((_, i) => !dropped.has(i));
}
