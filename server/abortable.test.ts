import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { abortableWait } from "./abortable";

// The one abortable wait: every way out clears its timer and removes its abort listener.

/** A signal whose live "abort" listeners can be counted (added and not removed again). */
function countedSignal() {
  const controller = new AbortController();
  const { signal } = controller;
  const add = vi.spyOn(signal, "addEventListener");
  const remove = vi.spyOn(signal, "removeEventListener");
  const listeners = () => {
    const live = new Set(add.mock.calls.filter(([type]) => type === "abort").map(([, fn]) => fn));
    for (const [type, fn] of remove.mock.calls) if (type === "abort") live.delete(fn);
    return live.size;
  };
  return { controller, signal, listeners };
}

function deferred() {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("abortableWait", () => {
  it("is aborted at once when the signal was aborted before the call, whatever else is ready", async () => {
    const s = countedSignal();
    s.controller.abort();
    await expect(abortableWait({ ms: 1_000, until: Promise.resolve(), signal: s.signal })).resolves.toBe("aborted");
    expect(s.listeners()).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("is aborted when the signal aborts during the wait, and leaves no timer or listener", async () => {
    const s = countedSignal();
    const wait = abortableWait({ ms: 60_000, until: deferred().promise, signal: s.signal });
    expect(s.listeners()).toBe(1);
    expect(vi.getTimerCount()).toBe(1);
    s.controller.abort();
    await expect(wait).resolves.toBe("aborted");
    expect(s.listeners()).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("elapses after the delay, not before", async () => {
    const s = countedSignal();
    let outcome: string | null = null;
    void abortableWait({ ms: 1_000, signal: s.signal }).then((o) => (outcome = o));
    await vi.advanceTimersByTimeAsync(999);
    expect(outcome).toBeNull();
    await vi.advanceTimersByTimeAsync(1);
    expect(outcome).toBe("elapsed");
    expect(s.listeners()).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("elapses at once for a zero delay and no `until`, without a timer", async () => {
    await expect(abortableWait({ ms: 0 })).resolves.toBe("elapsed");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("is woken when `until` settles before the delay", async () => {
    const s = countedSignal();
    const wake = deferred();
    const wait = abortableWait({ ms: 60_000, until: wake.promise, signal: s.signal });
    wake.resolve();
    await expect(wait).resolves.toBe("woken");
    expect(s.listeners()).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("is woken, even with a zero delay, when `until` has already settled", async () => {
    for (const ms of [0, 1]) {
      const wait = abortableWait({ ms, until: Promise.resolve() });
      await vi.advanceTimersByTimeAsync(1);
      await expect(wait).resolves.toBe("woken");
    }
    expect(vi.getTimerCount()).toBe(0);
  });

  it("elapses after a zero delay when `until` has not settled", async () => {
    const wait = abortableWait({ ms: 0, until: deferred().promise });
    await vi.advanceTimersByTimeAsync(0);
    await expect(wait).resolves.toBe("elapsed");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("waits for `until` or the abort only when no delay is given", async () => {
    const s = countedSignal();
    const wake = deferred();
    let outcome: string | null = null;
    void abortableWait({ until: wake.promise, signal: s.signal }).then((o) => (outcome = o));
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(outcome).toBeNull();
    wake.resolve();
    await vi.waitFor(() => expect(outcome).toBe("woken"));
    expect(s.listeners()).toBe(0);
  });

  it("rejects with the reason of a rejected `until`, cleaning up the same way", async () => {
    const s = countedSignal();
    const wake = deferred();
    const wait = abortableWait({ ms: 60_000, until: wake.promise, signal: s.signal });
    wake.reject(new Error("boom"));
    await expect(wait).rejects.toThrow("boom");
    expect(s.listeners()).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("settles once: a later abort or wake-up after the timeout changes nothing", async () => {
    const s = countedSignal();
    const wake = deferred();
    const wait = abortableWait({ ms: 10, until: wake.promise, signal: s.signal });
    await vi.advanceTimersByTimeAsync(10);
    s.controller.abort();
    wake.resolve();
    await expect(wait).resolves.toBe("elapsed");
    expect(s.listeners()).toBe(0);
  });
});
