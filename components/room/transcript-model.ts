import type { MessageSource, TranscriptEvent, TurnEndReason } from "../api-types";
import { emptyList, listToArray, ListBuilder, type ChunkList } from "../chunk-list";

// Folds the session log into what the transcript shows. Pure, so the browser and tests agree:
// streamed deltas become one growing reply until the final assistant message replaces them.

export type TranscriptItem =
  | { kind: "user"; key: string; seq: number; text: string; source: MessageSource }
  | {
      kind: "assistant";
      key: string;
      seq: number;
      text: string;
      streaming: boolean;
      interrupted: boolean;
      toolCalls: { toolCallId: string; toolName: string; input: unknown }[];
    }
  | {
      kind: "tool";
      key: string;
      seq: number;
      toolName: string;
      output: unknown;
      isError: boolean;
      errorCode?: string;
      /** The file version a workspace tool wrote, deleted or read (the card links to it). */
      file?: FileVersionRef;
      /** The memory this step proposed (the card marks it). */
      memory?: MemoryRef;
    }
  | { kind: "compaction"; key: string; seq: number; throughSeq: number }
  | {
      kind: "wait";
      key: string;
      seq: number;
      /** The step is still waiting; once its reply starts (or the turn ends) only a step that was retried keeps a past note. */
      live: boolean;
      /** The latest wait of the step: for a provider slot, or before a retry. */
      wait: ModelWaitView;
      /** The seq of that latest wait (a countdown restarts with each). */
      waitSeq: number;
      /** Retries the step has waited for so far, and the latest one's reason. */
      retries: number;
      reason: string | null;
      /** The turn ended during the latest retry's wait: that retry never ran. */
      endedWaiting?: boolean;
    }
  | { kind: "turn_end"; key: string; seq: number; reason: TurnEndReason; error?: string; at: Date };

type ModelWaitView = Extract<TranscriptEvent["payload"], { kind: "model_wait" }>["wait"];

/** Where an item that may still change sits: the reply streamed for (turn, step), or the step's live wait line. */
interface OpenItem {
  turnId: string;
  step: number;
  index: number;
}

type TurnEndItem = Extract<TranscriptItem, { kind: "turn_end" }>;

/**
 * The transcript folded so far. `extendFold` takes it further with newer events, so a batch
 * costs what the batch changes, not the history: only the streamed reply and the live wait
 * line change after they are made, and both sit near the end.
 */
export interface TranscriptFold {
  readonly items: ChunkList<TranscriptItem>;
  /** The turn_end items, in order (who pressed Stop is worked out over these alone). */
  readonly ends: readonly TurnEndItem[];
  /** The seq of the first and last event folded (0 when none). */
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly streamingAt: OpenItem | null;
  readonly waitingAt: OpenItem | null;
}

export const EMPTY_FOLD: TranscriptFold = { items: emptyList(), ends: [], firstSeq: 0, lastSeq: 0, streamingAt: null, waitingAt: null };

/**
 * Folds `events` (in seq order) onto `fold`; events at or before its last seq are skipped (a
 * reconnect may resend them). The log may start mid-turn (a page of its end): a reply whose
 * deltas or turn start are on an earlier page is shown from what is there.
 */
export function extendFold(fold: TranscriptFold, events: readonly TranscriptEvent[]): TranscriptFold {
  const fresh = events.filter((e) => e.seq > fold.lastSeq);
  if (fresh.length === 0) return fold;
  const items = new ListBuilder(fold.items);
  const ends: TurnEndItem[] = [];
  let { streamingAt, waitingAt } = fold;
  const settleWait = (byTurnEnd: boolean) => {
    const cur = waitingAt && items.at(waitingAt.index);
    if (waitingAt && cur?.kind === "wait") {
      // A step that was never retried leaves no line. Removing it moves no open item: a reply
      // starts streaming only once the wait is settled, so a streamed reply sits before it.
      if (cur.retries === 0) items.removeAt(waitingAt.index);
      else items.set(waitingAt.index, { ...cur, live: false, endedWaiting: byTurnEnd && cur.wait.kind === "retry" });
    }
    waitingAt = null;
  };

  for (const e of fresh) {
    const p = e.payload;
    if (waitingAt && (p.kind === "assistant_delta" || p.kind === "assistant_message" || p.kind === "turn_end" || p.kind === "step_start")) {
      // Ended during the wait: the turn's end, or the empty reply a Stop records first.
      settleWait(p.kind === "turn_end" || (p.kind === "assistant_message" && p.interrupted && p.text === "" && p.toolCalls.length === 0));
    }
    switch (p.kind) {
      case "model_wait": {
        const retry = p.wait.kind === "retry" ? p.wait : null;
        const cur = waitingAt && waitingAt.turnId === p.turnId && waitingAt.step === p.step ? items.at(waitingAt.index) : null;
        if (waitingAt && cur?.kind === "wait") {
          items.set(waitingAt.index, { ...cur, wait: p.wait, waitSeq: e.seq, retries: cur.retries + (retry ? 1 : 0), reason: retry?.reason ?? cur.reason });
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
        const cur = streamingAt && streamingAt.turnId === p.turnId && streamingAt.step === p.step ? items.at(streamingAt.index) : null;
        if (streamingAt && cur?.kind === "assistant") items.set(streamingAt.index, { ...cur, text: cur.text + p.text });
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
          items.set(streamingAt.index, { ...final, key: items.at(streamingAt.index)!.key });
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
          ...memoryOfTool(p.toolName, p.isError, p.output),
        });
        break;
      case "compaction":
        items.push({ kind: "compaction", key: `compaction-${e.seq}`, seq: e.seq, throughSeq: p.throughSeq });
        break;
      case "turn_end":
        // A reply still "streaming" when its turn ended was cut off.
        if (streamingAt) {
          const cur = items.at(streamingAt.index);
          if (cur?.kind === "assistant") items.set(streamingAt.index, { ...cur, streaming: false, interrupted: true });
          streamingAt = null;
        }
        if (p.reason !== "completed") {
          const end: TurnEndItem = { kind: "turn_end", key: `end-${e.seq}`, seq: e.seq, reason: p.reason, error: p.error, at: e.createdAt };
          items.push(end);
          ends.push(end);
        }
        break;
      default:
        break;
    }
  }
  return {
    items: items.done(),
    ends: ends.length === 0 ? fold.ends : [...fold.ends, ...ends],
    firstSeq: fold.firstSeq || fresh[0]!.seq,
    lastSeq: fresh.at(-1)!.seq,
    streamingAt,
    waitingAt,
  };
}

/** The whole log folded at once (what `extendFold` in any batches comes to). */
export function foldTranscript(events: readonly TranscriptEvent[]): TranscriptItem[] {
  return listToArray(extendFold(EMPTY_FOLD, events).items);
}

/**
 * What a wait line says. Live: "Retrying in 4 s (429 rate limited)" counting down from the
 * delay (`elapsedMs` since the wait was seen), or "Waiting for the provider"; past: how often
 * the step was retried and why.
 */
export function waitText(item: Extract<TranscriptItem, { kind: "wait" }>, elapsedMs = 0): string {
  if (!item.live && item.endedWaiting) {
    const ran = item.retries - 1;
    return `The turn ended while waiting to retry (${item.reason})${ran > 0 ? ` after ${ran} ${ran === 1 ? "retry" : "retries"}` : ""}`;
  }
  if (!item.live) return item.retries === 1 ? `Retried after ${item.reason}` : `Retried ${item.retries} times (${item.reason})`;
  if (item.wait.kind === "provider") return "Waiting for the provider (too many requests at once)";
  const seconds = Math.ceil(Math.max(0, item.wait.delayMs - elapsedMs) / 1000);
  return seconds > 0 ? `Retrying in ${seconds} s (${item.wait.reason})` : `Retrying now (${item.wait.reason})`;
}

/**
 * The item that shows the log at `seq`: the one from that event, else the latest item before it
 * (events such as a turn's start or a completed turn's end have no item of their own).
 */
export function focusItemKey(items: Iterable<TranscriptItem>, seq: number): string | null {
  return focusItemAt(items, seq)?.key ?? null;
}

/** `focusItemKey` with the item's index. */
export function focusItemAt(items: Iterable<TranscriptItem>, seq: number): { key: string; index: number } | null {
  let found: { key: string; index: number } | null = null;
  let index = 0;
  for (const item of items) {
    if (item.seq > seq) break;
    found = { key: item.key, index };
    index += 1;
  }
  return found;
}

export interface FileVersionRef {
  path: string;
  version: number;
}

/** The workspace tools whose results name one file version (SPEC.md §14). */
const FILE_TOOLS: ReadonlySet<string> = new Set(["workspace_write", "workspace_edit", "workspace_delete", "workspace_read"]);

/** `{ file }` when a workspace tool's successful result has a path and a version, else nothing. */
export function fileOfTool(toolName: string, isError: boolean, output: unknown): { file?: FileVersionRef } {
  if (isError || !FILE_TOOLS.has(toolName) || typeof output !== "object" || output === null || "error" in output) return {};
  const { path, version } = output as { path?: unknown; version?: unknown };
  if (typeof path !== "string" || path === "" || typeof version !== "number" || !Number.isInteger(version) || version < 1) return {};
  return { file: { path, version } };
}

export interface MemoryRef {
  id: string;
  /** As the proposal's result said: waiting for a person, or approved by the team's setting. */
  status: "proposed" | "approved";
}

/** `{ memory }` when memory_propose succeeded, else nothing. */
export function memoryOfTool(toolName: string, isError: boolean, output: unknown): { memory?: MemoryRef } {
  if (isError || toolName !== "memory_propose" || typeof output !== "object" || output === null) return {};
  const { id, status } = output as { id?: unknown; status?: unknown };
  if (typeof id !== "string" || (status !== "proposed" && status !== "approved")) return {};
  return { memory: { id, status } };
}

/** A person's Stop, as the team's action record has it. */
export interface StopRecord {
  name: string;
  at: Date;
}

/**
 * Who stopped each aborted turn: the latest Stop recorded before the turn ended and after the
 * turn before it ended. Keys are turn_end item keys; a turn with no such record (stopped long
 * ago, beyond the record the room holds) has no entry.
 */
export function stoppedBy(items: Iterable<TranscriptItem>, stops: readonly StopRecord[]): Map<string, string> {
  const out = new Map<string, string>();
  const sorted = [...stops].sort((a, b) => a.at.getTime() - b.at.getTime());
  let after = -Infinity;
  for (const item of items) {
    if (item.kind !== "turn_end") continue;
    const end = item.at.getTime();
    if (item.reason === "aborted") {
      const stop = sorted.filter((s) => s.at.getTime() > after && s.at.getTime() <= end).at(-1);
      if (stop) out.set(item.key, stop.name);
    }
    after = end;
  }
  return out;
}

