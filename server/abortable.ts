// The one abortable wait. Callers map the outcome to their own result or error (an AbortError
// for a model stream, TEAM_WAIT_ABORTED for wait_agent), so this module imports nothing.

export type WaitOutcome = "elapsed" | "woken" | "aborted";

export interface WaitOptions {
  /** Delay after which the wait is "elapsed"; none: wait for `until` or the abort only. */
  ms?: number;
  /** Settling wakes the wait ("woken"); a rejection rejects the wait with its reason. */
  until?: PromiseLike<unknown>;
  signal?: AbortSignal;
}

/**
 * Waits for the first of: the delay, `until`, or the abort. A signal already aborted at call
 * time (which fires no event) is "aborted" at once, ahead of everything else; an `until` that
 * has already settled wins over any delay; with no `until`, a delay ≤ 0 is "elapsed" at once
 * (no timer). Whatever wins, the timer is cleared and the abort listener removed.
 */
export function abortableWait({ ms, until, signal }: WaitOptions): Promise<WaitOutcome> {
  if (signal?.aborted) return Promise.resolve("aborted");
  if (ms !== undefined && ms <= 0 && !until) return Promise.resolve("elapsed");
  return new Promise<WaitOutcome>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let settled = false;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      settle();
    };
    const onAbort = () => finish(() => resolve("aborted"));
    if (ms !== undefined) timer = setTimeout(() => finish(() => resolve("elapsed")), ms);
    signal?.addEventListener("abort", onAbort, { once: true });
    until?.then(
      () => finish(() => resolve("woken")),
      (e: unknown) => finish(() => reject(e)),
    );
  });
}

/** The error an aborted model call rejects with (the name every caller checks). */
export function abortError(message = "The model call was aborted"): Error {
  return Object.assign(new Error(message), { name: "AbortError" });
}
