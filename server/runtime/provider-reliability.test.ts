import { fakeProviderTest } from "../testing/fake-provider-fixture";
import { describe, expect } from "vitest";
import { asSessionId, type SessionId } from "../ids";
import type { Db } from "../db/client";
import { type FakeScript } from "../models/testing/fake-provider-server";
import { listMembers } from "../team/roster";
import { eventsOf, turnEnds, waitFor, waitForTurns } from "../testing/runtime-harness";
import type { SessionEvent } from "./events";
import { createSession, promptSession, requestAbort } from "./sessions";

// Provider failures end to end (SPEC.md §15): the runtime, the registry's resilient models and
// the real SDK clients against the fake provider, in both wire formats. Backoffs are a few ms
// (MODEL_RETRY_BASE_MS); waits that matter are driven by the fake server holding responses.

const KEYS = { openai: "sk-reliability-openai-0123456789", anthropic: "sk-ant-reliability-anthropic-0123456789" };

const it = fakeProviderTest({
  OPENAI_API_KEY: KEYS.openai,
  ANTHROPIC_API_KEY: KEYS.anthropic,
  MODEL_MAX_RETRIES: "3",
  MODEL_RETRY_BASE_MS: "5",
  MODEL_RETRY_MAX_MS: "5000",
  MODEL_FIRST_TOKEN_TIMEOUT_MS: "1000",
  OPENAI_MAX_CONCURRENT_REQUESTS: "2",
  ANTHROPIC_MAX_CONCURRENT_REQUESTS: "2",
});

type Provider = "openai-compatible" | "anthropic";

const replies = (events: SessionEvent[]) => events.flatMap((e) => (e.payload.kind === "assistant_message" ? [e.payload] : []));
const waits = (events: SessionEvent[]) => events.flatMap((e) => (e.payload.kind === "model_wait" ? [e.payload.wait] : []));
const never = new Promise<never>(() => undefined);

describe.each([
  { provider: "openai-compatible" as const, model: "fake-gpt", key: KEYS.openai },
  { provider: "anthropic" as const, model: "fake-claude", key: KEYS.anthropic },
])("$provider", ({ provider, model, key }) => {
  const session = async (db: Db, title: string, provider_: Provider = provider): Promise<SessionId> =>
    asSessionId((await createSession(db, { title, model: { provider: provider_, model } })).id);

  /** One prompt, one turn, against these scripts; the turn's events. */
  async function turn(rt: { db: Db }, fake: { reset(): void; enqueue(...s: FakeScript[]): void }, title: string, ...scripts: FakeScript[]) {
    fake.reset();
    fake.enqueue(...scripts);
    const id = await session(rt.db, title);
    await promptSession(rt.db, id, { text: "go" });
    return { id, events: await waitForTurns(rt.db, id, 1) };
  }

  it("429 with Retry-After, then success: the turn completes and the log shows the wait and its reason", async ({ rt, fake }) => {
    const { events } = await turn(rt, fake, "429", { status: 429, message: "slow down", headers: { "retry-after-ms": "20" } }, { text: ["Fine ", "now."] });
    expect(turnEnds(events)).toEqual([expect.objectContaining({ reason: "completed" })]);
    expect(waits(events)).toEqual([{ kind: "retry", attempt: 1, delayMs: 20, reason: "429 rate limited" }]);
    expect(replies(events).map((r) => r.text)).toEqual(["Fine now."]);
    // The wait is logged before the reply of its step.
    const at = (kind: string) => events.findIndex((e) => e.payload.kind === kind);
    expect(at("model_wait")).toBeLessThan(at("assistant_message"));
    expect(fake.requests).toHaveLength(2);
  });

  it("503 three times, then success", async ({ rt, fake }) => {
    const busy = { status: 503, message: "busy" };
    const { events } = await turn(rt, fake, "503", busy, busy, busy, { text: ["Made it."] });
    expect(turnEnds(events)).toEqual([expect.objectContaining({ reason: "completed" })]);
    expect(waits(events).map((w) => (w.kind === "retry" ? [w.attempt, w.reason] : w.kind))).toEqual([
      [1, "503 unavailable"],
      [2, "503 unavailable"],
      [3, "503 unavailable"],
    ]);
    expect(fake.requests).toHaveLength(4);
  });

  it("retries exhausted: the turn ends error with a readable reason, the roster shows it until a turn succeeds", async ({ rt, fake }) => {
    const down = { status: 500, message: "upstream exploded" };
    const { id, events } = await turn(rt, fake, "exhausted", down, down, down, down);
    const [end] = turnEnds(events);
    expect(end).toMatchObject({ reason: "error", error: `${provider}:${model}: 500 server error; gave up after 4 attempts: upstream exploded` });
    expect(fake.requests).toHaveLength(4);
    expect((await listMembers(rt.db, id))[0]!.lastError).toBe(end!.error);

    fake.enqueue({ text: ["Back."] });
    await promptSession(rt.db, id, { text: "again" });
    await waitForTurns(rt.db, id, 2);
    expect((await listMembers(rt.db, id))[0]!.lastError).toBeNull();
  });

  it("401: one request, no retry, a readable error, and the key in no event, log line or error", async ({ rt, fake }) => {
    const { id, events } = await turn(rt, fake, "401", { status: 401, message: "invalid x-api-key {key}" });
    expect(fake.requests).toHaveLength(1);
    expect(JSON.stringify(fake.requests[0]!.headers)).toContain(key); // it was sent, and echoed back
    const [end] = turnEnds(events);
    expect(end).toMatchObject({ reason: "error", error: `${provider}:${model}: 401 not authorised (check the API key): invalid x-api-key [redacted]` });
    expect(waits(events)).toEqual([]);
    expect(JSON.stringify(events)).not.toContain(key);
    expect(rt.logs.join("\n")).not.toContain(key);
    expect(rt.logs.join("\n")).toContain("401 not authorised");
    const [lead] = await listMembers(rt.db, id);
    expect(lead!.lastError).toBe(end!.error);
    expect(JSON.stringify(lead)).not.toContain(key);
  });

  it("a stream cut mid-text keeps the text as an interrupted reply (its usage estimated and spent) and is not retried", async ({ rt, fake }) => {
    const { id, events } = await turn(rt, fake, "cut", { text: ["Half a ", "thought"], cut: true }, { text: ["never sent"] });
    expect(fake.requests).toHaveLength(1);
    expect(replies(events)).toEqual([expect.objectContaining({ text: "Half a thought", interrupted: true, toolCalls: [] })]);
    // The provider sent no usage but billed the reply: estimated, marked so, and in the spend.
    const usage = replies(events)[0]!.usage;
    expect(usage).toMatchObject({ estimated: true, outputTokens: Math.ceil(("Half a thought" + "[]").length / 4) });
    expect(usage.inputTokens).toBeGreaterThan(0);
    const spend = await rt.db.session.findUniqueOrThrow({ where: { id }, select: { spentInputTokens: true, spentOutputTokens: true } });
    expect([Number(spend.spentInputTokens), Number(spend.spentOutputTokens)]).toEqual([usage.inputTokens, usage.outputTokens]);
    expect(turnEnds(events)).toEqual([expect.objectContaining({ reason: "error", error: expect.stringContaining("the response stream broke off") })]);
  });

  it("assembles tool-call arguments split across many chunks", async ({ rt, fake }) => {
    const argumentsJson = JSON.stringify({ timeZone: "Europe/Amsterdam" });
    const { events } = await turn(
      rt,
      fake,
      "split args",
      { toolCalls: [{ id: "call_split", name: "current_time", argumentsJson }], argumentChunks: argumentsJson.length },
      { text: ["Done."] },
    );
    expect(replies(events)[0]!.toolCalls).toEqual([{ toolCallId: "call_split", toolName: "current_time", input: { timeZone: "Europe/Amsterdam" } }]);
    expect(events.find((e) => e.payload.kind === "tool_result")?.payload).toMatchObject({ toolCallId: "call_split", isError: false });
    expect(turnEnds(events)).toEqual([expect.objectContaining({ reason: "completed" })]);
  });

  it("records usage sent only in the final chunk, cached tokens included, in the reply and the session's spend", async ({ rt, fake }) => {
    const { id, events } = await turn(rt, fake, "usage", { text: ["Counted."], usage: { inputTokens: 120, outputTokens: 8, cachedInputTokens: 100 }, usageAtEnd: true });
    expect(replies(events)[0]!.usage).toEqual({ inputTokens: 120, outputTokens: 8, cachedInputTokens: 100 });
    const spent = await rt.db.session.findUniqueOrThrow({ where: { id }, select: { spentInputTokens: true, spentOutputTokens: true, spentCachedTokens: true } });
    expect(spent).toEqual({ spentInputTokens: 120n, spentOutputTokens: 8n, spentCachedTokens: 100n });
  });

  it("a first token slower than the timeout: the attempt is abandoned and retried, and the turn completes", async ({ rt, fake }) => {
    const { events } = await turn(rt, fake, "slow", { text: ["too late"], hold: never }, { text: ["In time."] });
    expect(waits(events)).toEqual([expect.objectContaining({ kind: "retry", attempt: 1, reason: "no first token after 1 s" })]);
    expect(replies(events).map((r) => r.text)).toEqual(["In time."]);
    expect(fake.requests[0]!.disconnectedEarly).toBe(true);
    expect(turnEnds(events)).toEqual([expect.objectContaining({ reason: "completed" })]);
  });

  it("a Stop during the backoff ends the turn at once, without another request", async ({ rt, fake }) => {
    fake.reset();
    fake.enqueue({ status: 429, message: "later", headers: { "retry-after": "4" } }, { text: ["never"] });
    const id = await session(rt.db, "stop in backoff");
    await promptSession(rt.db, id, { text: "go" });
    await waitFor(async () => waits(await eventsOf(rt.db, id)).length === 1, 5_000, "the retry wait");
    const stoppedAt = Date.now();
    await requestAbort(rt.db, id, "stop");
    const events = await waitForTurns(rt.db, id, 1);
    expect(Date.now() - stoppedAt).toBeLessThan(2_000);
    expect(turnEnds(events)).toEqual([expect.objectContaining({ reason: "aborted" })]);
    expect(fake.requests).toHaveLength(1);
  });

  it("8 agents on a cap of 2: never more than 2 requests in flight, queued agents served in order, every agent completes", async ({ rt, fake }) => {
    fake.reset();
    const gates = Array.from({ length: 8 }, () => {
      let open!: () => void;
      const promise = new Promise<void>((r) => (open = r));
      return { promise, open };
    });
    fake.enqueue(...gates.map((g, i) => ({ text: [`Reply ${i}.`], stall: g.promise })));
    const ids: SessionId[] = [];
    for (let i = 0; i < 8; i++) {
      const id = await session(rt.db, `agent ${i}`);
      ids.push(id);
      await promptSession(rt.db, id, { text: `task of agent ${i}` });
      // Known order: each agent reaches the provider, or its queue (its wait is logged), before the next asks.
      if (i < 2) await fake.waitForRequests(i + 1);
      else await waitFor(async () => waits(await eventsOf(rt.db, id)).some((w) => w.kind === "provider"), 5_000, `agent ${i} queued`);
    }
    expect(fake.inFlight).toBe(2);
    for (let i = 0; i < 8; i++) {
      gates[i]!.open();
      await fake.waitForRequests(Math.min(8, i + 3));
    }
    const all = await Promise.all(ids.map((id) => waitForTurns(rt.db, id, 1)));
    expect(fake.maxInFlight).toBe(2);
    expect(fake.requests.map((r) => JSON.stringify(r.body).match(/task of agent (\d)/)?.[1])).toEqual(["0", "1", "2", "3", "4", "5", "6", "7"]);
    expect(all.map((events) => turnEnds(events)[0]?.reason)).toEqual(Array(8).fill("completed"));
    expect(all.map((events) => replies(events)[0]?.text)).toEqual(gates.map((_, i) => `Reply ${i}.`));
    expect(all.map((events) => waits(events).map((w) => w.kind))).toEqual([[], [], ...Array(6).fill(["provider"])]);
  });
});
