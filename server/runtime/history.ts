import type { ModelMessage, ToolCall } from "../models/types";
import type { SessionEvent } from "./events";

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
          output: r ? r.output : { error: { code: "INTERRUPTED", message: "The tool did not run: the turn was interrupted." } },
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
        out.push({ role: "user", text: p.text });
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

/** Rough token estimate (4 characters a token) of what the model would be sent. */
export function estimateTokens(messages: ModelMessage[]): number {
  let chars = 0;
  for (const m of messages) {
    if (m.role === "user") chars += m.text.length;
    else if (m.role === "assistant") chars += m.text.length + JSON.stringify(m.toolCalls).length;
    else chars += JSON.stringify(m.results).length;
  }
  return Math.ceil(chars / 4);
}

/** Seq of the last turn_end (the end of the completed part of the log), or 0. */
export function lastCompletedTurnSeq(events: SessionEvent[]): number {
  for (let i = events.length - 1; i >= 0; i--) if (events[i]!.payload.kind === "turn_end") return events[i]!.seq;
  return 0;
}

/** Text streamed in the open step that never became an assistant message (crash recovery). */
export function unfinishedStreamText(events: SessionEvent[]): { turnId: string; step: number; text: string } | null {
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

/** throughSeq of the latest compaction, or 0. */
export function lastCompactedSeq(events: SessionEvent[]): number {
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
export function transcriptText(messages: ModelMessage[]): string {
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
