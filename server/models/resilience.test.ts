// The resilient wrapper around the real SDK clients, against the local fake provider in both
// wire formats: retries and their waits, timeouts, the Stop during a backoff, the concurrency
// cap. Timing is driven by the fake server holding responses until the test releases them.

import { describe, expect, it } from "vitest";
import { createAnthropicModel, createOpenAICompatibleModel, ModelProviderError } from "./ai-sdk";
import { ConcurrencyLimiter, resilientModel, type ResilienceOptions, type Slot } from "./resilience";
import { fakeProviderServerForFile, type FakeProviderServer } from "./testing/fake-provider-server";
import type { LanguageModel, ModelChunk, ModelRequest } from "./types";

let server: FakeProviderServer;
fakeProviderServerForFile((s) => (server = s));

const REQUEST: ModelRequest = { system: "Be brief.", purpose: "step", tools: [], messages: [{ role: "user", text: "Hi" }] };

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
const never = new Promise<never>(() => undefined);

async function collect(iterable: AsyncIterable<ModelChunk>): Promise<ModelChunk[]> {
  const out: ModelChunk[] = [];
  for await (const c of iterable) out.push(c);
  return out;
}
const texts = (chunks: ModelChunk[]) => chunks.flatMap((c) => (c.type === "text-delta" ? [c.text] : []));
const waits = (chunks: ModelChunk[]) => chunks.flatMap((c) => (c.type === "wait" ? [c.wait] : []));

const KEYS = { openai: "sk-resilience-openai-key", anthropic: "sk-ant-resilience-anthropic-key" };
const WIRES = [
  { wire: "openai", make: () => createOpenAICompatibleModel({ baseURL: server.baseURL, apiKey: KEYS.openai, model: "gpt-test" }), key: KEYS.openai },
  { wire: "anthropic", make: () => createAnthropicModel({ baseURL: server.baseURL, apiKey: KEYS.anthropic, model: "claude-test" }), key: KEYS.anthropic },
];

function options(over: Partial<ResilienceOptions> = {}): ResilienceOptions {
  return {
    retry: { maxRetries: 4, baseDelayMs: 1, maxDelayMs: 60_000, maxRetryAfterMs: 60_000 },
    firstTokenTimeoutMs: 5_000,
    requestTimeoutMs: 10_000,
    limiter: new ConcurrencyLimiter(8),
    random: () => 0,
    ...over,
  };
}

describe.each(WIRES)("$wire through the resilient wrapper", ({ make, key }) => {
  const model = (over?: Partial<ResilienceOptions>) => resilientModel(make(), options(over));

  it("waits what Retry-After asks after a 429, says so before the wait, then streams the answer", async () => {
    server.enqueue({ status: 429, message: "slow down", headers: { "Retry-After": "1" } }, { text: ["Hel", "lo"] });
    const started = Date.now();
    const chunks = await collect(model().stream(REQUEST, new AbortController().signal));
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(chunks.map((c) => c.type)).toEqual(["wait", "text-delta", "text-delta", "finish"]);
    expect(waits(chunks)).toEqual([{ kind: "retry", attempt: 1, delayMs: 1000, reason: "429 rate limited" }]);
    expect(server.requests).toHaveLength(2);
  });

  it("retries 503 three times with a growing backoff, then succeeds", async () => {
    server.enqueue(...Array.from({ length: 3 }, () => ({ status: 503, message: "busy" })), { text: ["ok"] });
    const chunks = await collect(model({ retry: { maxRetries: 4, baseDelayMs: 8, maxDelayMs: 1000, maxRetryAfterMs: 1000 }, random: () => 0.5 }).stream(REQUEST, new AbortController().signal));
    expect(waits(chunks)).toEqual([1, 2, 3].map((attempt) => ({ kind: "retry", attempt, delayMs: 4 * 2 ** (attempt - 1), reason: "503 unavailable" })));
    expect(texts(chunks)).toEqual(["ok"]);
    expect(server.requests).toHaveLength(4);
  });

  it("gives up after the configured retries with a readable error", async () => {
    server.enqueue(...Array.from({ length: 3 }, () => ({ status: 502, message: "bad gateway" })));
    const seen: ModelChunk[] = [];
    const error = await (async () => {
      for await (const c of model({ retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 10, maxRetryAfterMs: 10 } }).stream(REQUEST, new AbortController().signal)) seen.push(c);
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelProviderError);
    expect((error as Error).message).toMatch(/: 502 server error; gave up after 3 attempts: bad gateway$/);
    expect(waits(seen)).toHaveLength(2);
    expect(server.requests).toHaveLength(3);
  });

  it("does not retry a 401, and the error names the cause without the key", async () => {
    server.enqueue({ status: 401, message: "invalid key {key}" }, { text: ["never"] });
    const error = (await collect(model().stream(REQUEST, new AbortController().signal)).catch((e: unknown) => e)) as ModelProviderError;
    expect(error.message).toMatch(/^[a-z-]+:[a-z-]+: 401 not authorised \(check the API key\): invalid key \[redacted\]/);
    expect(JSON.stringify({ message: error.message, failure: error.failure })).not.toContain(key);
    expect(server.requests).toHaveLength(1);
  });

  it("does not retry a stream cut after text: the text came out, then the error", async () => {
    server.enqueue({ text: ["partial ", "reply"], cut: true }, { text: ["never"] });
    const seen: ModelChunk[] = [];
    const error = await (async () => {
      for await (const c of model().stream(REQUEST, new AbortController().signal)) seen.push(c);
    })().catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/the response stream broke off/);
    expect(texts(seen)).toEqual(["partial ", "reply"]);
    expect(server.requests).toHaveLength(1);
  });

  it("retries a stream cut before anything came out, as a connection failure", async () => {
    server.enqueue({ cut: true }, { text: ["whole"] });
    const chunks = await collect(model().stream(REQUEST, new AbortController().signal));
    expect(waits(chunks)).toEqual([expect.objectContaining({ kind: "retry", reason: "connection failed" })]);
    expect(texts(chunks)).toEqual(["whole"]);
  });

  it("abandons an attempt whose first token does not come in time, and retries it", async () => {
    server.enqueue({ text: ["late"], hold: never }, { text: ["on time"] });
    const chunks = await collect(model({ firstTokenTimeoutMs: 500 }).stream(REQUEST, new AbortController().signal));
    expect(waits(chunks)).toEqual([expect.objectContaining({ kind: "retry", attempt: 1, reason: "no first token after 1 s" })]);
    expect(texts(chunks)).toEqual(["on time"]);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]!.disconnectedEarly).toBe(true);
  });

  it("counts streaming tool-call arguments as the first token (a long call is not abandoned)", async () => {
    const stall = deferred();
    server.enqueue({ toolCalls: [{ id: "c1", name: "write", argumentsJson: '{"text":"a long file"}' }], argumentChunks: 6, stall: stall.promise });
    const done = collect(model({ firstTokenTimeoutMs: 300 }).stream({ ...REQUEST, tools: [{ name: "write", description: "w", inputSchema: { type: "object" } }] }, new AbortController().signal));
    await server.waitForRequests(1);
    // Arguments have started; the end is held well past the first-token timeout.
    setTimeout(stall.resolve, 900);
    const chunks = await done;
    expect(chunks.filter((c) => c.type === "tool-call")).toEqual([{ type: "tool-call", call: { toolCallId: "c1", toolName: "write", input: { text: "a long file" } } }]);
    expect(chunks.some((c) => c.type === "progress" || c.type === "wait")).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it("cuts an attempt at the request timeout; text already streamed stays, nothing is retried", async () => {
    server.enqueue({ text: ["half"], stall: never }, { text: ["never"] });
    const seen: ModelChunk[] = [];
    const error = await (async () => {
      for await (const c of model({ requestTimeoutMs: 1000 }).stream(REQUEST, new AbortController().signal)) seen.push(c);
    })().catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/no complete answer after 1 s \(request timeout\)/);
    expect(texts(seen)).toEqual(["half"]);
    expect(server.requests).toHaveLength(1);
  });

  it("ends a backoff at once when the turn is stopped", async () => {
    server.enqueue({ status: 429, message: "later", headers: { "retry-after": "30" } }, { text: ["never"] });
    const stop = new AbortController();
    const seen: ModelChunk[] = [];
    let stoppedAt = 0;
    const error = await (async () => {
      for await (const c of model().stream(REQUEST, stop.signal)) {
        seen.push(c);
        if (c.type === "wait") {
          stoppedAt = Date.now();
          stop.abort();
        }
      }
    })().catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "AbortError" });
    expect(Date.now() - stoppedAt).toBeLessThan(500);
    expect(waits(seen)).toEqual([{ kind: "retry", attempt: 1, delayMs: 30_000, reason: "429 rate limited" }]);
    expect(server.requests).toHaveLength(1);
  });

  it("holds the slot for the whole stream, frees it during a backoff and when the consumer stops early", async () => {
    const limiter = new ConcurrencyLimiter(1);
    server.enqueue({ status: 503, message: "busy", headers: { "retry-after-ms": "50" } }, { text: ["a", "b"], stall: never });
    const seenActive: number[] = [];
    const run = (async () => {
      for await (const c of model({ limiter }).stream(REQUEST, new AbortController().signal)) {
        seenActive.push(limiter.active);
        if (c.type === "text-delta") break;
      }
    })();
    await run;
    // The retry wait was yielded with no slot held; the text with the slot held.
    expect(seenActive).toEqual([0, 1]);
    expect(limiter.active).toBe(0);
    await expect.poll(() => server.requests[1]?.disconnectedEarly).toBe(true);
  });

  it("caps concurrent requests and serves waiting requests in the order they asked", async () => {
    const limiter = new ConcurrencyLimiter(2);
    const gates = Array.from({ length: 8 }, deferred);
    server.enqueue(...gates.map((g, i) => ({ text: [`reply ${i}`], stall: g.promise })));
    const runs: Promise<ModelChunk[]>[] = [];
    for (let i = 0; i < 8; i++) {
      runs.push(collect(model({ limiter }).stream({ ...REQUEST, messages: [{ role: "user", text: `agent ${i}` }] }, new AbortController().signal)));
      // Each asks only after the one before it has reached the provider or the queue, so the
      // order of asking (and of the scripts the fake hands out) is known.
      if (i < 2) await server.waitForRequests(i + 1);
      else await expect.poll(() => limiter.waiting).toBe(i - 1);
    }
    expect(limiter.active).toBe(2);
    for (let i = 0; i < 8; i++) {
      gates[i]!.resolve();
      await server.waitForRequests(Math.min(8, i + 3));
    }
    const results = await Promise.all(runs);
    expect(server.maxInFlight).toBe(2);
    const asked = server.requests.map((r) => JSON.stringify(r.body).match(/agent (\d)/)?.[1]);
    expect(asked).toEqual(["0", "1", "2", "3", "4", "5", "6", "7"]);
    // The six that waited said so first.
    expect(results.map((chunks) => waits(chunks).length)).toEqual([0, 0, 1, 1, 1, 1, 1, 1]);
    expect(results.map((chunks) => texts(chunks).join(""))).toEqual(gates.map((_, i) => `reply ${i}`));
  });
});

describe("ConcurrencyLimiter", () => {
  const signal = () => new AbortController().signal;

  it("grants in order of asking; a newcomer never overtakes a waiter", async () => {
    const limiter = new ConcurrencyLimiter(1);
    const order: string[] = [];
    const first = limiter.enter(signal());
    expect(first.immediate).toBe(true);
    const waiting = ["b", "c", "d"].map((name) => {
      const t = limiter.enter(signal());
      void t.slot.then((s) => order.push(name) && s);
      return t;
    });
    expect(waiting.map((t) => t.immediate)).toEqual([false, false, false]);
    (await first.slot).release();
    const b = await waiting[0]!.slot;
    // A slot freed and handed over: the count never dipped, so a newcomer still waits.
    const late = limiter.enter(signal());
    expect(late.immediate).toBe(false);
    b.release();
    (await waiting[1]!.slot).release();
    (await waiting[2]!.slot).release();
    await late.slot;
    expect(order).toEqual(["b", "c", "d"]);
  });

  it("lets an aborted waiter leave the queue without taking a slot; releasing twice frees one slot", async () => {
    const limiter = new ConcurrencyLimiter(1);
    const holder: Slot = await limiter.enter(signal()).slot;
    const quitter = new AbortController();
    const gone = limiter.enter(quitter.signal);
    const next = limiter.enter(signal());
    expect(limiter.waiting).toBe(2);
    quitter.abort();
    await expect(gone.slot).rejects.toMatchObject({ name: "AbortError" });
    expect(limiter.waiting).toBe(1);
    holder.release();
    holder.release();
    const got = await next.slot;
    expect(limiter.active).toBe(1);
    next.cancel();
    got.release();
    expect(limiter.active).toBe(0);
    expect(limiter.enter(signal()).immediate).toBe(true);
  });

  it("cancelling a waiting ticket leaves the queue; an aborted signal never queues", () => {
    const limiter = new ConcurrencyLimiter(1);
    limiter.enter(signal());
    const t = limiter.enter(signal());
    t.cancel();
    expect(limiter.waiting).toBe(0);
    const aborted = new AbortController();
    aborted.abort();
    expect(limiter.enter(aborted.signal).immediate).toBe(false);
    expect(limiter.waiting).toBe(0);
    expect(() => new ConcurrencyLimiter(0)).toThrow(RangeError);
  });
});

/** A model that is not the SDK: the wrapper needs nothing but the interface. */
describe("any LanguageModel", () => {
  it("passes a keyless-style model through unchanged when nothing fails", async () => {
    const plain: LanguageModel = {
      id: "test:plain",
      async *stream() {
        yield { type: "text-delta", text: "hi" };
        yield { type: "finish", usage: { inputTokens: 1, outputTokens: 1 } };
      },
    };
    const chunks = await collect(resilientModel(plain, options()).stream(REQUEST, new AbortController().signal));
    expect(chunks).toEqual([
      { type: "text-delta", text: "hi" },
      { type: "finish", usage: { inputTokens: 1, outputTokens: 1 } },
    ]);
  });
});
