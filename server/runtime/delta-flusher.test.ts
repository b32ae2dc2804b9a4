import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DeltaFlusher } from "./delta-flusher";

// Flush timing on fake timers: one append per interval at most, one in flight at a time.

function writer() {
  const writes: string[] = [];
  const pending: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  const write = (text: string) =>
    new Promise<void>((resolve, reject) => {
      writes.push(text);
      pending.push({ resolve, reject });
    });
  /** Completes the oldest write still in flight. */
  const complete = async (error?: unknown) => {
    const w = pending.shift()!;
    if (error === undefined) w.resolve();
    else w.reject(error);
    await vi.advanceTimersByTimeAsync(0);
  };
  return { writes, write, complete, completed: () => writes.length - pending.length };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("DeltaFlusher", () => {
  it("writes a reply's first text soon, then at most once per interval however fast text comes", async () => {
    const w = writer();
    const f = new DeltaFlusher(300, w.write, 50);
    f.push("first");
    await vi.advanceTimersByTimeAsync(49);
    expect(w.writes).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(w.writes).toEqual(["first"]);
    await w.complete();
    // A token every millisecond for 1.15 s, each write completing at once: one write per 300 ms.
    for (let t = 0; t < 1_150; t++) {
      f.push("x");
      await vi.advanceTimersByTimeAsync(1);
      if (w.writes.length > w.completed()) await w.complete();
    }
    expect(w.writes.length).toBe(1 + 3);
    expect(w.writes.slice(1).every((text) => /^x{299,301}$/.test(text))).toBe(true);
    await f.settle();
  });

  it("writes what was pushed within one interval as one batch, after the interval", async () => {
    const w = writer();
    const f = new DeltaFlusher(50, w.write);
    f.push("a");
    await vi.advanceTimersByTimeAsync(30);
    f.push("b");
    await vi.advanceTimersByTimeAsync(19);
    expect(w.writes).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(w.writes).toEqual(["ab"]);
  });

  it("keeps one write in flight: text pushed meanwhile goes one interval after it completes", async () => {
    const w = writer();
    const f = new DeltaFlusher(50, w.write);
    f.push("a");
    await vi.advanceTimersByTimeAsync(50);
    f.push("b");
    f.push("c");
    await vi.advanceTimersByTimeAsync(500);
    expect(w.writes).toEqual(["a"]);
    await w.complete();
    await vi.advanceTimersByTimeAsync(49);
    expect(w.writes).toEqual(["a"]);
    await vi.advanceTimersByTimeAsync(1);
    expect(w.writes).toEqual(["a", "bc"]);
  });

  it("schedules nothing while there is nothing to write", async () => {
    const w = writer();
    const f = new DeltaFlusher(50, w.write);
    expect(vi.getTimerCount()).toBe(0);
    f.push("a");
    await vi.advanceTimersByTimeAsync(50);
    await w.complete();
    expect(vi.getTimerCount()).toBe(0);
    await f.settle();
    expect(w.writes).toEqual(["a"]);
  });

  it("settle drops unflushed text, cancels the timer and waits for the write in flight", async () => {
    const w = writer();
    const f = new DeltaFlusher(50, w.write);
    f.push("a");
    await vi.advanceTimersByTimeAsync(50);
    f.push("dropped");
    let settled = false;
    const settling = f.settle().then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(false);
    await w.complete();
    await settling;
    expect(settled).toBe(true);
    await vi.advanceTimersByTimeAsync(500);
    expect(w.writes).toEqual(["a"]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("stops writing after a failed write, and settle rethrows its error", async () => {
    const w = writer();
    const f = new DeltaFlusher(50, w.write);
    f.push("a");
    await vi.advanceTimersByTimeAsync(50);
    f.push("b");
    const lost = new Error("lease lost");
    await w.complete(lost);
    await vi.advanceTimersByTimeAsync(500);
    expect(w.writes).toEqual(["a"]);
    await expect(f.settle()).rejects.toBe(lost);
  });
});
