import { toolErrorOutput } from "../errors";
import type { ModelMessage, ToolCall } from "../models/types";
import type { SessionEvent } from "./events";
import { REPLY_CUT_OFF, TURN_STOPPED } from "./config";
import { formatHumanPrompt } from "../models/human-prompt";

// Projections of the session log. The model history is derived, never stored (ModelHistory
// keeps a driver's derivation up to date in memory).

/** The events the model still sees: after the latest compaction, with its summary first. */
export function visibleEvents(events: readonly SessionEvent[]): readonly SessionEvent[] {
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
export function toModelMessages(events: readonly SessionEvent[]): ModelMessage[] {
  const fold = new MessageFold();
  for (const e of events) fold.add(e);
  return fold.messages();
}

/**
 * toModelMessages, one event at a time. A tool round stays open until the next message closes
 * it (its results may still come); `messages()` closes a copy of it.
 */
class MessageFold {
  private readonly closed: ModelMessage[] = [];
  private open: ToolCall[] = [];
  private results = new Map<string, { output: unknown; isError: boolean }>();
  /** The characters of `closed` that the token estimate counts (messageChars). */
  private closedChars = 0;
  /** The text of the last runtime-context snapshot folded in. */
  snapshot: string | null = null;

  add({ payload: p }: SessionEvent): void {
    switch (p.kind) {
      case "user_message":
        this.closeToolRound();
        this.push({ role: "user", text: p.source.kind === "human" && p.source.name ? formatHumanPrompt(p.source.name, p.text) : p.text });
        if (p.source.kind === "runtime_context") this.snapshot = p.text;
        break;
      case "assistant_message":
        this.closeToolRound();
        if (p.text === "" && p.toolCalls.length === 0) break;
        this.push({ role: "assistant", text: p.interrupted ? `${p.text}${REPLY_CUT_OFF}` : p.text, toolCalls: p.toolCalls });
        this.open = p.toolCalls;
        break;
      case "tool_result":
        this.results.set(p.toolCallId, { output: p.output, isError: p.isError });
        break;
      case "turn_end":
        if (p.reason !== "aborted") break;
        this.closeToolRound();
        this.push({ role: "user", text: TURN_STOPPED });
        break;
      default:
        break;
    }
  }

  /** The messages so far (a new array: the caller may keep it while more events come). */
  messages(): ModelMessage[] {
    const round = this.toolRound();
    return round ? [...this.closed, round] : this.closed.slice();
  }

  /** Rough token estimate (4 characters a token) of `messages()`. */
  estimatedTokens(): number {
    const round = this.toolRound();
    return Math.ceil((this.closedChars + (round ? messageChars(round) : 0)) / 4);
  }

  private push(m: ModelMessage): void {
    this.closed.push(m);
    this.closedChars += messageChars(m);
  }

  private closeToolRound(): void {
    const round = this.toolRound();
    if (!round) return;
    this.push(round);
    this.open = [];
    this.results = new Map();
  }

  private toolRound(): ModelMessage | null {
    if (this.open.length === 0) return null;
    return {
      role: "tool",
      results: this.open.map((c) => {
        const r = this.results.get(c.toolCallId);
        return {
          toolCallId: c.toolCallId,
          toolName: c.toolName,
          output: r ? r.output : toolErrorOutput("INTERRUPTED", "The tool did not run: the turn was interrupted."),
          isError: r ? r.isError : true,
        };
      }),
    };
  }
}

/** The characters a message adds to a token estimate. */
function messageChars(m: ModelMessage): number {
  if (m.role === "user") return m.text.length;
  if (m.role === "assistant") return m.text.length + JSON.stringify(m.toolCalls).length;
  return JSON.stringify(m.results).length;
}

/**
 * The model's view of a driver's log (visibleEvents, then toModelMessages), kept up to date as
 * the log grows instead of recomputed from the whole log: a step reads it three times, and a
 * long session's steps would each cost O(history). Each method first catches up with `events`,
 * the driver's copy of the log, which only ever gains events. Those appended at its end are
 * folded in; anything else (an append that answered out of order and was sorted in, another
 * array) or a compaction's events start the fold over, as visibleEvents would.
 */
export class ModelHistory {
  private log: readonly SessionEvent[] | null = null;
  private fold = new MessageFold();
  /** Events of `log` folded in, and the last of them (still at its place unless one was sorted in before it). */
  private seen = 0;
  private last: SessionEvent | undefined;

  messages(events: readonly SessionEvent[]): ModelMessage[] {
    return this.sync(events).messages();
  }

  /** Rough token estimate (4 characters a token) of what the model would be sent. */
  estimatedTokens(events: readonly SessionEvent[]): number {
    return this.sync(events).estimatedTokens();
  }

  /** The text of the last runtime-context snapshot the model still sees, if any. */
  retainedContextSnapshot(events: readonly SessionEvent[]): string | null {
    return this.sync(events).snapshot;
  }

  private sync(events: readonly SessionEvent[]): MessageFold {
    const inPlace = events === this.log && events.length >= this.seen && (this.seen === 0 || events[this.seen - 1] === this.last);
    const added = inPlace ? events.slice(this.seen) : events;
    if (!inPlace || added.some(reshapes)) {
      this.fold = new MessageFold();
      for (const e of visibleEvents(events)) this.fold.add(e);
    } else {
      for (const e of added) this.fold.add(e);
    }
    this.log = events;
    this.seen = events.length;
    this.last = events.at(-1);
    return this.fold;
  }
}

/** A compaction changes what is visible: the fold starts over (visibleEvents). */
const reshapes = (e: SessionEvent) => e.payload.kind === "compaction" || (e.payload.kind === "user_message" && e.payload.source.kind === "compaction_summary");

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
