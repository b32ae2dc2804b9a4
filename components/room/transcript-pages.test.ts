import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TranscriptEvent } from "../api-types";
import { listToArray } from "../chunk-list";
import { EMPTY_FOLD, extendFold, foldTranscript } from "./transcript-model";
import { fromNewestPage, withEarlierPage, withLive, type LoadedTranscript, type TranscriptPage } from "./transcript-pages";
import { history } from "../testing/transcript";

/** What `session.transcript` returns: the newest `limit` events before `beforeSeq`. */
function page(log: readonly TranscriptEvent[], beforeSeq: number, limit: number): TranscriptPage {
  const events = log.filter((e) => e.seq < beforeSeq).slice(-limit);
  return { events, hasMore: (events[0]?.seq ?? 1) > 1 };
}

describe("a transcript opened from the end", () => {
  it("holds a gap-free tail of the log folded as if read whole, through live batches and earlier pages in any order", () => {
    const step = fc.oneof(fc.record({ live: fc.nat(8), resend: fc.nat(3) }), fc.record({ earlier: fc.integer({ min: 1, max: 9 }) }));
    fc.assert(
      fc.property(history, fc.nat(), fc.integer({ min: 1, max: 20 }), fc.array(step, { maxLength: 30 }), (log, openAt, newest, steps) => {
        // The room opens when the log has `k` events; the rest commit while it is open.
        const k = log.length === 0 ? 0 : openAt % (log.length + 1);
        let t: LoadedTranscript = fromNewestPage(page(log.slice(0, k), Infinity, newest));
        let committed = k;
        const check = () => {
          const held = listToArray(t.events);
          const from = held[0]?.seq ?? committed + 1;
          expect(held).toEqual(log.slice(from - 1, Math.max(from - 1, t.fold.lastSeq)));
          expect(t.hasEarlier).toBe(from > 1);
          expect(listToArray(t.fold.items)).toEqual(listToArray(extendFold(EMPTY_FOLD, held).items));
        };
        check();
        for (const s of steps) {
          if ("live" in s) {
            // The feed sends what committed after the newest page, from a reconnect's id maybe again.
            const upTo = Math.min(log.length, committed + s.live);
            const batch = log.slice(Math.max(t.liveFrom, t.fold.lastSeq - s.resend), upTo);
            committed = upTo;
            t = withLive(t, batch);
          } else if (t.hasEarlier) {
            t = withEarlierPage(t, page(log, t.fold.firstSeq, s.earlier));
          }
          check();
        }
        while (t.hasEarlier) t = withEarlierPage(t, page(log, t.fold.firstSeq, 7));
        t = withLive(t, log.slice(t.liveFrom));
        expect(listToArray(t.events)).toEqual(log);
        expect(listToArray(t.fold.items)).toEqual(foldTranscript(log));
      }),
      { numRuns: 300 },
    );
  });

  it("shows a turn that straddles the first page sensibly, and whole once the page before is in", () => {
    const T = "turn_1";
    const at = new Date(0);
    const log: TranscriptEvent[] = [
      { seq: 1, createdAt: at, payload: { kind: "turn_start", turnId: T } },
      { seq: 2, createdAt: at, payload: { kind: "user_message", messageId: "u1", text: "plan it", source: { kind: "human", name: "Ana" } } },
      { seq: 3, createdAt: at, payload: { kind: "assistant_delta", turnId: T, step: 0, text: "Sand" } },
      { seq: 4, createdAt: at, payload: { kind: "assistant_delta", turnId: T, step: 0, text: "wiches" } },
    ];
    // The newest page starts in the middle of the reply: what is there streams on.
    const t = fromNewestPage(page(log, Infinity, 1));
    expect(listToArray(t.fold.items)).toEqual([expect.objectContaining({ kind: "assistant", text: "wiches", streaming: true })]);
    const more = withLive(t, [{ seq: 5, createdAt: at, payload: { kind: "assistant_delta", turnId: T, step: 0, text: "!" } }]);
    expect(listToArray(more.fold.items)).toEqual([expect.objectContaining({ text: "wiches!" })]);
    const whole = withEarlierPage(more, page(log, more.fold.firstSeq, 10));
    expect(listToArray(whole.fold.items).map((i) => (i.kind === "assistant" ? i.text : i.kind))).toEqual(["user", "Sandwiches!"]);
    expect(whole.hasEarlier).toBe(false);
  });
});
