import { newMessageId, type SessionId, type TurnId } from "../ids";
import { costNanos, type Price } from "../models/catalog";
import { estimateUsage } from "../models/estimate";
import type { LanguageModel, ModelRequest, ToolCall, Usage } from "../models/types";
import type { AgentJournal } from "./agent-journal";
import type { AgentServices } from "./agent-services";
import { DeltaFlusher } from "./delta-flusher";
import type { EventPayload, PayloadOf } from "./events";
import { appendEvents, type Lease, type SpendDelta } from "./session-log";
import { chargeStatement, lessCharged } from "./step-reserve";
import type { PendingReply } from "./turn-close";

// One model call of a resident agent's step (agent.ts).

/** What a model call needs of its driver. */
export interface ModelStepScope {
  svc: AgentServices;
  sessionId: SessionId;
  lease: Lease;
  journal: AgentJournal;
  bill: StepBill;
}

/**
 * A step's request's cost: `due` from its start until its provider answers (a request refused or
 * never answered is not billed), then `charged` (on the spend) until its reply settles it.
 */
export interface StepBill {
  due: SpendDelta | null;
  charged: SpendDelta | null;
}

/**
 * Streams deltas into the log in small batches, then records the message with its usage and
 * cost, and adds both to the session's spend in the same transaction. A complete reply without
 * tool calls is returned unrecorded (`reply`): it commits with the turn's end.
 */
export async function modelStep(
  scope: ModelStepScope,
  request: ModelRequest,
  model: LanguageModel,
  price: Price,
  turnId: TurnId,
  step: number,
  signal: AbortSignal,
): Promise<{ toolCalls: ToolCall[]; messageId: string; reply: PendingReply | null }> {
  const { svc, sessionId, lease } = scope;
  let text = "";
  const toolCalls: ToolCall[] = [];
  let usage: Usage & { estimated?: true } = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 };
  // Every streaming agent flushes a few times a second: those due together go out together
  // (db.sqlCoalesced), each still its own commit.
  const flusher = new DeltaFlusher(svc.config.deltaFlushMs, async (chunk) =>
    scope.journal.committed(await appendEvents(svc.db.sqlCoalesced, sessionId, [{ kind: "assistant_delta", turnId, step, text: chunk }], lease)),
  );
  const messageId = newMessageId();
  const message = ({ interrupted }: { interrupted: boolean }): PayloadOf<"assistant_message"> => ({
    kind: "assistant_message",
    messageId,
    turnId,
    step,
    model: model.id,
    text,
    // Half-formed (and unexecuted) tool calls of an interrupted reply are dropped.
    toolCalls: interrupted ? [] : toolCalls,
    usage,
    costNanos: costNanos(price, usage),
    interrupted,
  });
  let reported = false;
  /** The reply's events (a complete one without tool calls ends its step) and its spend. */
  const reply = (interrupted: boolean, endsStep = false): PendingReply => {
    // A reply cut off before its usage came is billed all the same: estimated, and marked so.
    if (!reported && (text !== "" || toolCalls.length > 0)) usage = { ...estimateUsage(request, { text, toolCalls }), estimated: true };
    const m = message({ interrupted });
    const end: EventPayload[] = endsStep ? [{ kind: "step_end", turnId, step }] : [];
    // Its real usage replaces the estimate its start billed, and the step's reservation (runtime/step-reserve.ts).
    const charged = scope.bill.charged;
    scope.bill.charged = null;
    scope.bill.due = null;
    return { payloads: [m, ...end], spend: { ...lessCharged(spendOf(usage, m.costNanos ?? 0), charged), settlesReservation: true } };
  };
  const record = (r: PendingReply) => scope.journal.append(r.payloads, undefined, r.spend);
  /** The provider answers: the request's estimated input goes on the spend, before anything else of the reply. */
  const answered = async () => {
    const due = scope.bill.due;
    if (!due) return;
    scope.bill.due = null;
    await svc.db.sqlCoalesced.$executeRaw(chargeStatement(sessionId, lease, due));
    scope.bill.charged = due;
    svc.announce({ sessionId, kind: "spend" });
  };
  try {
    for await (const chunk of model.stream(request, signal)) {
      if (chunk.type !== "wait") await answered();
      if (chunk.type === "text-delta") {
        text += chunk.text;
        flusher.push(chunk.text);
      } else if (chunk.type === "tool-call") toolCalls.push(chunk.call);
      else if (chunk.type === "wait") await scope.journal.append([{ kind: "model_wait", turnId, step, wait: chunk.wait }], undefined);
      else if (chunk.type === "finish") {
        usage = chunk.usage;
        reported = true;
      }
    }
    if (signal.aborted) throw new Error("aborted");
  } catch (e) {
    await flusher.settle();
    if (text !== "" || signal.aborted) await record(reply(true));
    throw e;
  }
  await flusher.settle();
  // Without tool calls the reply is left to the caller, to commit with the turn's end.
  if (toolCalls.length === 0) return { toolCalls, messageId, reply: reply(false, true) };
  await record(reply(false));
  return { toolCalls, messageId, reply: null };
}

/** What a step (or a compaction summary) adds to the session's spend counters. */
export function spendOf(usage: Usage, costNanos: number): SpendDelta {
  return { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, cachedInputTokens: usage.cachedInputTokens ?? 0, costNanos };
}
