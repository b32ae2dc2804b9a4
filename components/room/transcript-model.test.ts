import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TranscriptEvent, TranscriptPayload } from "../api-types";
import { listToArray } from "../chunk-list";
import { EMPTY_FOLD, extendFold, focusItemKey, foldTranscript, stoppedBy, waitText, type TranscriptFold, type TranscriptItem } from "./transcript-model";
import { history } from "../testing/transcript";

const at = new Date(0);
const log = (...payloads: TranscriptPayload[]): TranscriptEvent[] => payloads.map((payload, i) => ({ seq: i + 1, createdAt: at, payload }));
const T = "turn_1";

describe("foldTranscript", () => {
  it("grows one streaming reply from deltas, then replaces it with the final message", () => {
    const streaming = log(
      { kind: "turn_start", turnId: T },
      { kind: "user_message", messageId: "m1", text: "hi", source: { kind: "human" } },
      { kind: "assistant_delta", turnId: T, step: 0, text: "Hel" },
      { kind: "assistant_delta", turnId: T, step: 0, text: "lo" },
    );
    const items = foldTranscript(streaming);
    expect(items.map((i) => i.kind)).toEqual(["user", "assistant"]);
    expect(items[1]).toMatchObject({ text: "Hello", streaming: true });

    const done = foldTranscript([
      ...streaming,
      {
        seq: 5,
        createdAt: at,
        payload: {
          kind: "assistant_message", messageId: "m2", turnId: T, step: 0, model: "x", text: "Hello!",
          toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 }, interrupted: false,
        },
      },
    ]);
    expect(done).toHaveLength(2);
    expect(done[1]).toMatchObject({ text: "Hello!", streaming: false, key: items[1]!.key });
  });

  it("marks a reply cut off by its turn's end as interrupted and shows the reason", () => {
    const items = foldTranscript(
      log(
        { kind: "turn_start", turnId: T },
        { kind: "assistant_delta", turnId: T, step: 0, text: "partial" },
        { kind: "turn_end", turnId: T, reason: "interrupted" },
      ),
    );
    expect(items).toEqual([
      expect.objectContaining({ kind: "assistant", text: "partial", streaming: false, interrupted: true }),
      expect.objectContaining({ kind: "turn_end", reason: "interrupted" }),
    ]);
  });
});

describe("provider waits", () => {
  const wait = (step: number, w: Extract<TranscriptPayload, { kind: "model_wait" }>["wait"]): TranscriptPayload => ({ kind: "model_wait", turnId: T, step, wait: w });
  const retry = (attempt: number, delayMs: number, reason: string) => ({ kind: "retry" as const, attempt, delayMs, reason });
  const reply = (step: number, text: string, interrupted = false): TranscriptPayload => ({
    kind: "assistant_message", messageId: `m${step}`, turnId: T, step, model: "x", text, toolCalls: [], usage: { inputTokens: 1, outputTokens: 1 }, interrupted,
  });
  const waits = (items: TranscriptItem[]) => items.flatMap((i) => (i.kind === "wait" ? [i] : []));

  it("shows one live line per step, counting down to the latest retry, then a past note once the reply streams", () => {
    const waiting = log(
      { kind: "turn_start", turnId: T },
      { kind: "user_message", messageId: "u", text: "hi", source: { kind: "human" } },
      wait(0, retry(1, 4000, "429 rate limited")),
    );
    const [live] = waits(foldTranscript(waiting));
    expect(live).toMatchObject({ live: true, retries: 1 });
    expect([0, 1500, 3999, 4000].map((ms) => waitText(live!, ms))).toEqual([
      "Retrying in 4 s (429 rate limited)",
      "Retrying in 3 s (429 rate limited)",
      "Retrying in 1 s (429 rate limited)",
      "Retrying now (429 rate limited)",
    ]);

    const again = foldTranscript([...waiting, ...log(wait(0, retry(2, 2000, "503 unavailable"))).map((e) => ({ ...e, seq: e.seq + 3 }))]);
    expect(waits(again)).toHaveLength(1);
    expect(waitText(waits(again)[0]!)).toBe("Retrying in 2 s (503 unavailable)");

    const streaming = [...waiting, ...log(wait(0, retry(2, 2000, "503 unavailable")), { kind: "assistant_delta", turnId: T, step: 0, text: "Hel" }).map((e) => ({ ...e, seq: e.seq + 3 }))];
    const items = foldTranscript(streaming);
    expect(items.map((i) => i.kind)).toEqual(["user", "wait", "assistant"]);
    expect(waitText(waits(items)[0]!)).toBe("Retried 2 times (503 unavailable)");

    const once = foldTranscript([...waiting, ...log(reply(0, "Hello")).map((e) => ({ ...e, seq: e.seq + 3 }))]);
    expect(once.map((i) => i.kind)).toEqual(["user", "wait", "assistant"]);
    expect(waitText(waits(once)[0]!)).toBe("Retried after 429 rate limited");
  });

  it("says a queued step waits for the provider, and drops the line once it runs", () => {
    const queued = log({ kind: "turn_start", turnId: T }, wait(0, { kind: "provider" }));
    expect(waits(foldTranscript(queued)).map((w) => waitText(w))).toEqual(["Waiting for the provider (too many requests at once)"]);
    const ran = foldTranscript([...queued, { seq: 3, createdAt: at, payload: reply(0, "Done") }]);
    expect(ran.map((i) => i.kind)).toEqual(["assistant"]);
  });

  it("keeps the past note when retries ran out and the turn ended with the error", () => {
    const items = foldTranscript(
      log(
        { kind: "turn_start", turnId: T },
        wait(0, retry(1, 10, "500 server error")),
        wait(0, { kind: "provider" }),
        { kind: "turn_end", turnId: T, reason: "error", error: "x:y: 500 server error; gave up after 2 attempts" },
      ),
    );
    expect(items.map((i) => (i.kind === "wait" ? waitText(i) : i.kind))).toEqual(["Retried after 500 server error", "turn_end"]);
  });

  it("says the retry never ran when the turn ended during its wait (a Stop in the backoff)", () => {
    const items = foldTranscript(
      log(
        { kind: "turn_start", turnId: T },
        wait(0, retry(1, 10, "429 rate limited")),
        wait(0, retry(2, 20, "429 rate limited")),
        // What a Stop records: the (empty) interrupted reply, then the turn's end.
        reply(0, "", true),
        { kind: "turn_end", turnId: T, reason: "aborted" },
      ),
    );
    expect(items.map((i) => (i.kind === "wait" ? waitText(i) : i.kind))).toEqual(["The turn ended while waiting to retry (429 rate limited) after 1 retry", "assistant", "turn_end"]);
  });
});

describe("tool cards", () => {
  const result = (toolName: string, output: unknown, isError = false): TranscriptPayload => ({
    kind: "tool_result",
    turnId: T,
    toolCallId: `call_${toolName}`,
    toolName,
    output,
    isError,
    ...(isError ? { errorCode: "WORKSPACE_STALE_VERSION" } : {}),
  });

  it("link the file version a write, edit, delete or read touched", () => {
    const items = foldTranscript(
      log(
        result("workspace_write", { path: "notes/plan.md", version: 1, bytes: 10, warnings: [] }),
        result("workspace_edit", { path: "notes/plan.md", version: 2, replacements: 1 }),
        result("workspace_delete", { path: "notes/plan.md", version: 3, deleted: true }),
        result("workspace_read", { path: "src/app.ts", version: 7, content: "x" }),
      ),
    );
    expect(items.map((i) => (i.kind === "tool" ? i.file : "not a tool"))).toEqual([
      { path: "notes/plan.md", version: 1 },
      { path: "notes/plan.md", version: 2 },
      { path: "notes/plan.md", version: 3 },
      { path: "src/app.ts", version: 7 },
    ]);
  });

  it("link nothing for errors, other tools, or results without one path and version", () => {
    const items = foldTranscript(
      log(
        result("workspace_write", { error: { code: "WORKSPACE_STALE_VERSION", message: "stale" } }, true),
        // An error object even when not flagged as one.
        result("workspace_write", { error: { code: "X", message: "y" }, path: "a.md", version: 1 }),
        result("workspace_list", { files: [{ path: "a.md", version: 1 }] }),
        result("team_task_create", { path: "a.md", version: 1 }),
        result("workspace_read", { path: "a.md" }),
        result("workspace_read", { path: "a.md", version: 0 }),
        result("workspace_read", { path: "", version: 1 }),
        result("workspace_read", "a.md v1"),
        result("workspace_read", null),
      ),
    );
    expect(items.map((i) => i.kind === "tool" && i.file)).toEqual(items.map(() => undefined));
  });
  it("mark the steps that proposed a memory, as their results said", () => {
    const items = foldTranscript(
      log(
        result("memory_propose", { id: "mem_1", status: "proposed", note: "" }),
        result("memory_propose", { id: "mem_2", status: "approved", note: "" }),
        result("memory_propose", { error: { code: "MEMORY_CONFLICT", message: "no" } }, true),
        result("memory_search", { id: "mem_3", status: "approved" }),
      ),
    );
    expect(items.map((i) => i.kind === "tool" && i.memory)).toEqual([{ id: "mem_1", status: "proposed" }, { id: "mem_2", status: "approved" }, undefined, undefined]);
  });
});

describe("extendFold", () => {
  it("skips events it already folded (a reconnect's overlap)", () => {
    const a = log({ kind: "turn_start", turnId: T }, { kind: "assistant_delta", turnId: T, step: 0, text: "Hel" });
    const once = extendFold(EMPTY_FOLD, a);
    const more = [a[1]!, { seq: 3, createdAt: at, payload: { kind: "assistant_delta", turnId: T, step: 0, text: "lo" } } as TranscriptEvent];
    expect(listToArray(extendFold(once, more).items)).toEqual([expect.objectContaining({ text: "Hello", streaming: true })]);
    expect(extendFold(once, a)).toBe(once);
  });
});

describe("folding in batches", () => {
  /** The history with the cut points (indices) that split it into batches. */
  const split = history.chain((events) => fc.tuple(fc.constant(events), fc.uniqueArray(fc.nat(events.length), { maxLength: 12 })));
  const batches = (events: TranscriptEvent[], cuts: number[]) => {
    const at = [0, ...[...cuts].sort((a, b) => a - b), events.length];
    return at.slice(1).map((end, i) => events.slice(at[i], end));
  };
  const view = (f: TranscriptFold) => ({ items: listToArray(f.items), ends: f.ends, lastSeq: f.lastSeq, firstSeq: f.firstSeq });

  it("comes to what the whole history folded at once shows, however it is split", () => {
    fc.assert(
      fc.property(split, ([events, cuts]) => {
        const whole = extendFold(EMPTY_FOLD, events);
        const inBatches = batches(events, cuts).reduce(extendFold, EMPTY_FOLD);
        expect(view(inBatches)).toEqual(view(whole));
      }),
      { numRuns: 500 },
    );
  });

  it("comes to the same when batches resend events already folded", () => {
    fc.assert(
      fc.property(split, fc.nat(5), ([events, cuts], back) => {
        const resent = batches(events, cuts).map((b, i, all) => (i === 0 ? b : [...all[i - 1]!.slice(-back), ...b]));
        expect(view(resent.reduce(extendFold, EMPTY_FOLD))).toEqual(view(extendFold(EMPTY_FOLD, events)));
      }),
      { numRuns: 200 },
    );
  });

  it("leaves every fold it extended as it was", () => {
    fc.assert(
      fc.property(split, ([events, cuts]) => {
        const parts = batches(events, cuts);
        const folds = [EMPTY_FOLD];
        // Deep copies taken at once: a later batch that changed an item in place would show.
        const seen = [structuredClone(view(EMPTY_FOLD))];
        for (const b of parts) {
          folds.push(extendFold(folds.at(-1)!, b));
          seen.push(structuredClone(view(folds.at(-1)!)));
        }
        expect(folds.map(view)).toEqual(seen);
      }),
      { numRuns: 200 },
    );
  });
});

describe("stoppedBy", () => {
  const ms = (t: number) => new Date(t);
  /** Turns ending at the given times (ms), each with its reason. */
  const ends = (...turns: [number, "aborted" | "interrupted" | "completed" | "error"][]) =>
    foldTranscript(turns.map(([t, reason], i) => ({ seq: i + 1, createdAt: ms(t), payload: { kind: "turn_end", turnId: `turn_${i}`, reason } })));

  it("names who pressed Stop on each aborted turn: the latest Stop since the turn before ended", () => {
    const items = ends([1_000, "aborted"], [5_000, "completed"], [9_000, "aborted"], [12_000, "aborted"]);
    const stops = [
      { name: "Ana", at: ms(900) },
      { name: "Bo", at: ms(950) },
      { name: "Cy", at: ms(8_000) },
      // After the last turn ended: it stopped nothing yet.
      { name: "Di", at: ms(13_000) },
    ];
    const names = stoppedBy(items, stops);
    const keys = items.map((i) => i.key);
    expect([...names]).toEqual([
      [keys[0], "Bo"],
      [keys[1], "Cy"],
    ]);
    // The third aborted turn had no Stop of its own since the one before (the model's interrupt, or an old one).
    expect(names.has(keys[2]!)).toBe(false);
  });
});


describe("focusItemKey", () => {
  const items = foldTranscript(
    log(
      { kind: "turn_start", turnId: T },
      { kind: "user_message", messageId: "m1", text: "hi", source: { kind: "human" } },
      {
        kind: "assistant_message", messageId: "m2", turnId: T, step: 0, model: "x", text: "",
        toolCalls: [{ toolCallId: "c1", toolName: "team_task_list", input: {} }], usage: { inputTokens: 1, outputTokens: 1 }, interrupted: false,
      },
      { kind: "tool_result", turnId: T, toolCallId: "c1", toolName: "team_task_list", output: {}, isError: false },
      { kind: "turn_end", turnId: T, reason: "completed" },
    ),
  );

  it("finds the item of an event, or the latest one before an event that has none", () => {
    expect(focusItemKey(items, 2)).toBe("m1");
    expect(focusItemKey(items, 4)).toBe("tool-4");
    // A completed turn's end shows its last item; a turn's start the one before it.
    expect(focusItemKey(items, 5)).toBe("tool-4");
    expect(focusItemKey(items, 99)).toBe("tool-4");
    expect(focusItemKey(items, 1)).toBeNull();
  });
});
