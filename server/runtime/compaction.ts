import { newMessageId } from "../ids";
import type { LanguageModel, ModelMessage, Usage } from "../models/types";
import type { EventPayload, PayloadOf, SessionEvent } from "./events";
import { ModelHistory, toModelMessages, visibleEvents } from "./history";

// Compaction: when the history the model sees is over budget, the completed turns no earlier
// compaction covered are summarised by the session's own model, and the summary replaces them
// in the model history (history.ts visibleEvents applies it).

const SUMMARY_SYSTEM =
  "You write compaction summaries. Summarise the conversation so that the agent can continue the work: goals, decisions, facts learned, open tasks. Be concise.";
const SUMMARY_INSTRUCTION = "Summarise this conversation for your own future reference:";

/** What to summarise: the visible history through `throughSeq`, the end of the last completed turn. */
export interface CompactionPlan {
  throughSeq: number;
  messages: ModelMessage[];
}

/**
 * A plan when the visible history is over `budgetTokens` and completed turns are left that no
 * earlier compaction covered; otherwise null (an open turn is never summarised). `history` is
 * the driver's incremental view of the same log, when it keeps one.
 */
export function planCompaction(events: readonly SessionEvent[], budgetTokens: number, history = new ModelHistory()): CompactionPlan | null {
  if (history.estimatedTokens(events) <= budgetTokens) return null;
  const throughSeq = lastCompletedTurnSeq(events);
  if (throughSeq <= lastCompactedSeq(events)) return null;
  return { throughSeq, messages: toModelMessages(visibleEvents(events).filter((e) => e.seq <= throughSeq)) };
}

/**
 * Asks the model for the summary and returns the events that record it (marker, then summary).
 * The marker carries the call's usage: a summary is paid for like a step, and counts against budgets.
 */
export async function summarise(model: LanguageModel, plan: CompactionPlan, signal: AbortSignal): Promise<[PayloadOf<"compaction">, EventPayload]> {
  let summary = "";
  let usage: Usage = { inputTokens: 0, outputTokens: 0 };
  for await (const chunk of model.stream(
    {
      system: SUMMARY_SYSTEM,
      messages: [{ role: "user", text: `${SUMMARY_INSTRUCTION}\n\n${transcriptText(plan.messages)}` }],
      tools: [],
      purpose: "summary",
    },
    signal,
  )) {
    if (chunk.type === "text-delta") summary += chunk.text;
    else if (chunk.type === "finish") usage = chunk.usage;
  }
  const summaryMessageId = newMessageId();
  return [
    { kind: "compaction", throughSeq: plan.throughSeq, summaryMessageId, usage },
    { kind: "user_message", messageId: summaryMessageId, text: summary, source: { kind: "compaction_summary" } },
  ];
}

/** Seq of the last turn_end (the end of the completed part of the log), or 0. */
function lastCompletedTurnSeq(events: readonly SessionEvent[]): number {
  for (let i = events.length - 1; i >= 0; i--) if (events[i]!.payload.kind === "turn_end") return events[i]!.seq;
  return 0;
}

/** throughSeq of the latest compaction, or 0. */
function lastCompactedSeq(events: readonly SessionEvent[]): number {
  for (let i = events.length - 1; i >= 0; i--) {
    const p = events[i]!.payload;
    if (p.kind === "compaction") return p.throughSeq;
  }
  return 0;
}

/**
 * Plain-text rendering of messages, for a compaction request: providers reject tool calls in a
 * request that offers no tools, so the summariser reads the conversation as text.
 */
function transcriptText(messages: ModelMessage[]): string {
  return messages
    .map((m) => {
      if (m.role === "user") return `[user] ${m.text}`;
      if (m.role === "assistant") {
        const calls = m.toolCalls.map((c) => ` [called ${c.toolName} ${JSON.stringify(c.input)}]`).join("");
        return `[assistant] ${m.text}${calls}`;
      }
      return m.results.map((r) => `[${r.isError ? "tool error" : "tool result"} ${r.toolName}] ${JSON.stringify(r.output)}`).join("\n");
    })
    .join("\n");
}
