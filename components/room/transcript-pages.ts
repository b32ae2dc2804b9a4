import type { TranscriptEvent } from "../api-types";
import { ListBuilder, listFrom, listToArray, type ChunkList } from "../chunk-list";
import { EMPTY_FOLD, extendFold, type TranscriptFold } from "./transcript-model";

// What a transcript holds of its session's log: it opens with the log's newest page, the live
// feed appends from that page's last seq, and earlier pages are read back on demand. Pure, so
// the hook only fetches and the tests check the merging.

/** A page of the log, as `session.transcript` returns it: ascending, `hasMore` when older events exist. */
export interface TranscriptPage {
  events: readonly TranscriptEvent[];
  hasMore: boolean;
}

export interface LoadedTranscript {
  /** Every event held, in seq order and without gaps (kept so an earlier page can be folded in front). */
  readonly events: ChunkList<TranscriptEvent>;
  readonly fold: TranscriptFold;
  /** Older events exist that are not held yet. */
  readonly hasEarlier: boolean;
  /** The seq the live feed starts after: the newest page's last (0 for an empty log). */
  readonly liveFrom: number;
}

export function fromNewestPage(page: TranscriptPage): LoadedTranscript {
  return {
    events: listFrom(page.events),
    fold: extendFold(EMPTY_FOLD, page.events),
    hasEarlier: page.hasMore,
    liveFrom: page.events.at(-1)?.seq ?? 0,
  };
}

/** A live batch: events after the last one held are appended and folded; a reconnect's overlap is dropped. Costs the batch. */
export function withLive(t: LoadedTranscript, batch: readonly TranscriptEvent[]): LoadedTranscript {
  const fresh = batch.filter((e) => e.seq > t.fold.lastSeq);
  if (fresh.length === 0) return t;
  const events = new ListBuilder(t.events);
  for (const e of fresh) events.push(e);
  return { ...t, events: events.done(), fold: extendFold(t.fold, fresh) };
}

/**
 * An earlier page (read with `beforeSeq` = the first seq held) goes in front, and the whole
 * held log is folded again: a turn that straddled the old first page now shows whole.
 */
export function withEarlierPage(t: LoadedTranscript, page: TranscriptPage): LoadedTranscript {
  const first = t.fold.firstSeq || Infinity;
  const older = page.events.filter((e) => e.seq < first);
  if (older.length === 0) return { ...t, hasEarlier: t.hasEarlier && page.hasMore };
  const all = [...older, ...listToArray(t.events)];
  return { ...t, events: listFrom(all), fold: extendFold(EMPTY_FOLD, all), hasEarlier: page.hasMore };
}
