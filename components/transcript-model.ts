import type { MessageSource, TranscriptEvent, TurnEndReason } from "./api-types";

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

export function foldTranscript(events: readonly TranscriptEvent[]): TranscriptItem[] {
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
export function focusItemKey(items: readonly TranscriptItem[], seq: number): string | null {
  let found: TranscriptItem | undefined;
  for (const item of items) {
    if (item.seq > seq) break;
    found = item;
  }
  return found?.key ?? null;
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

/** Merges a batch of events into a seq-ordered list without duplicates (reconnects may overlap). */
export function mergeEvents(current: readonly TranscriptEvent[], incoming: readonly TranscriptEvent[]): TranscriptEvent[] {
  if (incoming.length === 0) return current as TranscriptEvent[];
  const last = current.at(-1)?.seq ?? 0;
  if (incoming.every((e, i) => e.seq > last && (i === 0 || e.seq > incoming[i - 1]!.seq))) return [...current, ...incoming];
  const bySeq = new Map<number, TranscriptEvent>();
  for (const e of current) bySeq.set(e.seq, e);
  for (const e of incoming) bySeq.set(e.seq, e);
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
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
export function stoppedBy(items: readonly TranscriptItem[], stops: readonly StopRecord[]): Map<string, string> {
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

