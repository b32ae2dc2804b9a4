import { fakeProviderTest } from "../testing/fake-provider-fixture";
import { describe, expect } from "vitest";
import { asSessionId, type SessionId } from "../ids";
import { waitForTurns } from "../testing/runtime-harness";
import type { SessionEvent } from "./events";
import { createSession, promptSession, SPEND_COLUMNS, spendOf } from "./sessions";

// Compatibility-mode notices about test model ids are noise here.
globalThis.AI_SDK_LOG_WARNINGS = false;

// What a step costs and what a session has spent, wired as server/main.ts wires it: the model
// registry, the price table from MODELS, and the real AI SDK path against the fake provider.

const MODELS = [
  { provider: "scripted", model: "keyless", price: { input: 2, output: 8 } },
  { provider: "openai-compatible", model: "fake-gpt", price: { input: 3, output: 15, cachedInput: 0.3 } },
  { provider: "anthropic", model: "fake-claude", price: { input: 3, output: 15, cachedInput: 0.3 } },
];

const it = fakeProviderTest({ SCRIPTED_MODEL_DELAY_MS: "0", MODELS: JSON.stringify(MODELS) });

const replies = (events: SessionEvent[]) => events.flatMap((e) => (e.payload.kind === "assistant_message" ? [e.payload] : []));

async function spent(db: Parameters<typeof waitForTurns>[0], id: SessionId) {
  return spendOf(await db.session.findUniqueOrThrow({ where: { id }, select: SPEND_COLUMNS }));
}

describe("the keyless model with a price", () => {
  it("costs each step by the price table and adds it to the session's counters", async ({ rt }) => {
    const s = await createSession(rt.db, { title: "priced keyless", model: { provider: "scripted", model: "keyless" } });
    const id = asSessionId(s.id);
    await promptSession(rt.db, id, { text: "/tool current_time {}\nWhat time is it?" });
    const steps = replies(await waitForTurns(rt.db, id, 1));
    expect(steps.length).toBeGreaterThanOrEqual(2);
    for (const m of steps) {
      expect(m.usage.inputTokens).toBeGreaterThan(0);
      // $2 / $8 per million tokens = 2,000 / 8,000 nano-USD per token.
      expect(m.costNanos).toBe(m.usage.inputTokens * 2_000 + m.usage.outputTokens * 8_000);
    }
    const sum = (f: (m: (typeof steps)[number]) => number) => steps.reduce((a, m) => a + f(m), 0);
    expect(await spent(rt.db, id)).toEqual({
      inputTokens: sum((m) => m.usage.inputTokens),
      outputTokens: sum((m) => m.usage.outputTokens),
      cachedTokens: 0,
      costNanos: sum((m) => m.costNanos ?? 0),
    });
  });
});

describe.each([
  { provider: "openai-compatible" as const, model: "fake-gpt" },
  { provider: "anthropic" as const, model: "fake-claude" },
])("a priced $provider model with cached input", ({ provider, model }) => {
  it("charges cached tokens at the cached price and counts them in the session's spend", async ({ rt, fake }) => {
    fake.reset();
    fake.enqueue(
      {
        text: ["Checking."],
        toolCalls: [{ id: "call_1", name: "current_time", argumentsJson: '{"timeZone":"UTC"}' }],
        usage: { inputTokens: 1_000, outputTokens: 20, cachedInputTokens: 800 },
      },
      { text: ["Done."], usage: { inputTokens: 1_100, outputTokens: 10, cachedInputTokens: 1_000 } },
    );
    const s = await createSession(rt.db, { title: provider, model: { provider, model } });
    const id = asSessionId(s.id);
    await promptSession(rt.db, id, { text: "What time is it?" });
    const steps = replies(await waitForTurns(rt.db, id, 1));

    expect(steps.map((m) => m.usage)).toEqual([
      { inputTokens: 1_000, outputTokens: 20, cachedInputTokens: 800 },
      { inputTokens: 1_100, outputTokens: 10, cachedInputTokens: 1_000 },
    ]);
    // (200 × $3 + 800 × $0.30 + 20 × $15) / 1e6 = $0.00114; (100 × 3 + 1000 × 0.3 + 10 × 15) / 1e6 = $0.00075.
    expect(steps.map((m) => m.costNanos)).toEqual([1_140_000, 750_000]);
    expect(await spent(rt.db, id)).toEqual({ inputTokens: 2_100, outputTokens: 30, cachedTokens: 1_800, costNanos: 1_890_000 });
  });
});
