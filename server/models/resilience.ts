// A real provider made fit for production (SPEC.md §15): retries of transient failures, a
// first-token and a request timeout, and a process-wide cap on concurrent requests per
// provider. Wraps any LanguageModel; the registry wraps the two real provider families (never
// the keyless scripted model). What to retry and how long to wait is retry-policy.ts's call;
// this module does the waiting and says so with `wait` chunks, which the runtime logs as
// `model_wait` events for the transcript.

import { abortableWait, abortError } from "../abortable";
import { ModelProviderError } from "./ai-sdk";
import { decide, type Failure, type RetryPolicy } from "./retry-policy";
import type { LanguageModel, ModelChunk, ModelRequest } from "./types";

// ------------------------------------------------------------------ the concurrency cap

/** One held slot of a limiter; releasing twice is harmless. */
export interface Slot {
  release(): void;
}

/** A place in a limiter's queue, taken at once (so the order is the order of asking). */
export interface Ticket {
  /** True when a slot was free at the time of asking (no wait). */
  readonly immediate: boolean;
  /** Resolves with the slot once it is this ticket's turn; rejects with an AbortError on abort. */
  readonly slot: Promise<Slot>;
  /** Leaves the queue, or releases the slot if it was granted. Idempotent. */
  cancel(): void;
}

interface Waiter {
  grant(): void;
}

/**
 * A FIFO semaphore: at most `capacity` slots held at once; waiters are served strictly in the
 * order they asked (a newcomer never overtakes a waiter); an aborted or cancelled waiter leaves
 * the queue without taking a slot.
 */
export class ConcurrencyLimiter {
  private held = 0;
  private readonly queue: Waiter[] = [];

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
  }

  /** Slots held now. */
  get active(): number {
    return this.held;
  }

  /** Requests waiting for a slot now. */
  get waiting(): number {
    return this.queue.length;
  }

  enter(signal: AbortSignal): Ticket {
    let state: "waiting" | "granted" | "done" = "waiting";
    const slot: Slot = {
      release: () => {
        if (state !== "granted") return;
        state = "done";
        this.handOver();
      },
    };
    if (signal.aborted) {
      const refused = Promise.reject(abortError());
      refused.catch(() => undefined);
      return { immediate: false, slot: refused, cancel: () => undefined };
    }
    if (this.held < this.capacity && this.queue.length === 0) {
      this.held += 1;
      state = "granted";
      return { immediate: true, slot: Promise.resolve(slot), cancel: () => slot.release() };
    }
    let settle!: { resolve: (s: Slot) => void; reject: (e: unknown) => void };
    const promise = new Promise<Slot>((resolve, reject) => (settle = { resolve, reject }));
    const onAbort = () => leave(abortError());
    const waiter: Waiter = {
      grant: () => {
        signal.removeEventListener("abort", onAbort);
        state = "granted";
        settle.resolve(slot);
      },
    };
    const leave = (reason: unknown) => {
      if (state !== "waiting") return;
      state = "done";
      signal.removeEventListener("abort", onAbort);
      this.queue.splice(this.queue.indexOf(waiter), 1);
      settle.reject(reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    this.queue.push(waiter);
    // Nobody awaits a cancelled ticket's promise: its rejection must not go unhandled.
    promise.catch(() => undefined);
    return {
      immediate: false,
      slot: promise,
      cancel: () => (state === "waiting" ? leave(abortError("left the provider queue")) : slot.release()),
    };
  }

  /** A released slot goes straight to the first waiter, so the count never dips for a newcomer to grab. */
  private handOver(): void {
    const next = this.queue.shift();
    if (next) next.grant();
    else this.held -= 1;
  }
}

// ------------------------------------------------------------------ the resilient model

export interface ResilienceOptions {
  retry: RetryPolicy;
  /** An attempt that has produced nothing (no text, tool-call input or reasoning) after this long is abandoned and retried. */
  firstTokenTimeoutMs: number;
  /** An attempt longer than this is cut; text already streamed stays as an interrupted reply. */
  requestTimeoutMs: number;
  /** The provider family's limiter, shared by every model of that family in the process. */
  limiter: ConcurrencyLimiter;
  /** For tests: the jitter source (retry-policy.ts `decide`). */
  random?: () => number;
}

export function resilientModel(inner: LanguageModel, opts: ResilienceOptions): LanguageModel {
  return { id: inner.id, maxOutputTokens: inner.maxOutputTokens, stream: (request, signal) => streamWithRetries(inner, request, signal, opts) };
}

async function* streamWithRetries(inner: LanguageModel, request: ModelRequest, signal: AbortSignal, opts: ResilienceOptions): AsyncGenerator<ModelChunk> {
  for (let attempt = 1; ; attempt++) {
    if (signal.aborted) throw abortError();
    const failure = yield* oneAttempt(inner, request, signal, opts);
    if (failure === null) return;
    const decision = decide(failure, attempt, opts.retry, { random: opts.random });
    if (!decision.retry) {
      const detail = failure.kind !== "first-token-timeout" && failure.message ? `: ${clip(failure.message)}` : "";
      throw new ModelProviderError(`${inner.id}: ${decision.reason}${detail}`, failure.kind === "http" ? failure.status : undefined, undefined, failure);
    }
    yield { type: "wait", wait: { kind: "retry", attempt, delayMs: decision.delayMs, reason: decision.reason } };
    // No slot is held here: other agents use the provider while this one backs off.
    if ((await abortableWait({ ms: decision.delayMs, signal })) === "aborted") throw abortError();
  }
}

/**
 * One request under a limiter slot. Returns null when the stream finished, or the failure to
 * retry when it failed before anything was yielded; anything else is thrown.
 */
async function* oneAttempt(inner: LanguageModel, request: ModelRequest, signal: AbortSignal, opts: ResilienceOptions): AsyncGenerator<ModelChunk, Failure | null> {
  const ticket = opts.limiter.enter(signal);
  // The finally releases the slot on every way out: done, failed, aborted, or the consumer
  // stopping early (return() at a yield).
  try {
    if (!ticket.immediate) yield { type: "wait", wait: { kind: "provider" } };
    await ticket.slot;
    const attemptAbort = new AbortController();
    let timedOut: "first-token" | "request" | null = null;
    const cut = (why: "first-token" | "request") => {
      timedOut ??= why;
      attemptAbort.abort();
    };
    const firstToken = setTimeout(() => cut("first-token"), opts.firstTokenTimeoutMs);
    const whole = setTimeout(() => cut("request"), opts.requestTimeoutMs);
    let yielded = false;
    const timeoutOutcome = (): Failure => {
      if (timedOut === "first-token" && !yielded) return { kind: "first-token-timeout", afterMs: opts.firstTokenTimeoutMs };
      // Not retried: an answer this long would likely be cut again, at full cost each time.
      throw new ModelProviderError(`${inner.id}: no complete answer after ${Math.round(opts.requestTimeoutMs / 1000)} s (request timeout)`);
    };
    try {
      for await (const chunk of inner.stream(request, AbortSignal.any([signal, attemptAbort.signal]))) {
        if (timedOut) break;
        clearTimeout(firstToken);
        if (chunk.type === "progress" || chunk.type === "wait") continue;
        if (chunk.type === "text-delta" || chunk.type === "tool-call") yielded = true;
        yield chunk;
      }
    } catch (e) {
      if (signal.aborted) throw e;
      if (timedOut) return timeoutOutcome();
      const failure = e instanceof ModelProviderError ? e.failure : undefined;
      // After text or a tool call, a retry would repeat or contradict it: the error goes up and
      // the runtime keeps the text as an interrupted reply.
      if (failure && !yielded) return failure;
      throw e;
    } finally {
      clearTimeout(firstToken);
      clearTimeout(whole);
    }
    if (timedOut) return timeoutOutcome();
    return null;
  } finally {
    ticket.cancel();
  }
}

function clip(text: string, max = 300): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
