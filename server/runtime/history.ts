import { toolErrorOutput } from "../errors";
import type { ModelMessage, ToolCall } from "../models/types";
import type { SessionEvent } from "./events";
import { formatHumanPrompt } from "./human-prompt";

// Pure projections of the session log. The model history is derived, never stored.

/** The events the model still sees: after the latest compaction, with its summary first. */
export function visibleEvents(events: SessionEvent[]): SessionEvent[] {
  let compaction: { throughSeq: number; summaryMessageId: string } | null = null;
  for (const e of events) if (e.payload.kind === "compaction") compaction = e.payload;
  if (!compaction) return events;
  const { throughSeq, summaryMessageId } = compaction;
  const isSummary = (e: SessionEvent) =>
    e.payload.kind === "user_message" && e.payload.messageId === summaryMessageId;
  const summary = events.filter(isSummary);
  return [...summary, ...events.filter((e) => e.seq > throughSeq && !isSummary(e))];
}

/**
 * Model messages from visible events. A tool call that never got a result (crash, interrupt)
 * gets a synthetic error result so every provider accepts the history.
 */
export function toModelMessages(events: SessionEvent[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  let open: ToolCall[] = [];
  let results = new Map<string, { output: unknown; isError: boolean }>();

  const closeToolRound = () => {
    if (open.length === 0) return;
    out.push({
      role: "tool",
      results: open.map((c) => {
        const r = results.get(c.toolCallId);
        return {
          toolCallId: c.toolCallId,
          toolName: c.toolName,
          output: r ? r.output : toolErrorOutput("INTERRUPTED", "The tool did not run: the turn was interrupted."),
          isError: r ? r.isError : true,
        };
      }),
    });
    open = [];
    results = new Map();
  };

  for (const { payload: p } of events) {
    switch (p.kind) {
      case "user_message":
        closeToolRound();
        out.push({ role: "user", text: p.source.kind === "human" && p.source.name ? formatHumanPrompt(p.source.name, p.text) : p.text });
        break;
      case "assistant_message":
        closeToolRound();
        if (p.text === "" && p.toolCalls.length === 0) break;
        out.push({ role: "assistant", text: p.text, toolCalls: p.toolCalls });
        open = p.toolCalls;
        break;
      case "tool_result":
        results.set(p.toolCallId, { output: p.output, isError: p.isError });
        break;
      default:
        break;
    }
  }
  closeToolRound();
  return out;
}

/** The text of the last runtime-context snapshot the model still sees, if any. */
export function retainedContextSnapshot(visible: SessionEvent[]): string | null {
  for (let i = visible.length - 1; i >= 0; i--) {
    const p = visible[i]!.payload;
    if (p.kind === "user_message" && p.source.kind === "runtime_context") return p.text;
  }
  return null;
}

/** Text streamed in the open step that never became an assistant message (crash recovery). */
export function unfinishedStreamText(events: readonly SessionEvent[]): { turnId: string; step: number; text: string } | null {
  let acc: { turnId: string; step: number; text: string } | null = null;
  for (const { payload: p } of events) {
    if (p.kind === "assistant_delta") {
      if (acc && acc.turnId === p.turnId && acc.step === p.step) acc.text += p.text;
      else acc = { turnId: p.turnId, step: p.step, text: p.text };
    } else if (p.kind === "assistant_message" || p.kind === "turn_end") {
      acc = null;
    }
  }
  return acc;
}
