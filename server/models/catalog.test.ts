import { describe, expect, it } from "vitest";
import { parseEnv } from "../env";
import { costNanos, sumSpend } from "./catalog";
import { formatCost, modelKey, priceText } from "../../shared/model-text";
import { availableModels, priceOf } from "./registry";

// The price table and how costs read (pure).

describe("cost", () => {
  it("charges uncached input, cached input and output at their prices, in nano-USD", () => {
    const price = { input: 3, output: 15, cachedInput: 0.3 };
    expect(costNanos(price, { inputTokens: 1_000, outputTokens: 100, cachedInputTokens: 400 })).toBe(600 * 3_000 + 400 * 300 + 100 * 15_000);
    // No cached price: cached tokens cost the input price.
    expect(costNanos({ input: 3, output: 15 }, { inputTokens: 1_000, outputTokens: 0, cachedInputTokens: 400 })).toBe(3_000_000);
  });

  it("sums spends and reads them as people do", () => {
    const a = { inputTokens: 10, outputTokens: 2, cachedTokens: 4, costNanos: 1_500_000 };
    expect(sumSpend([a, a])).toEqual({ inputTokens: 20, outputTokens: 4, cachedTokens: 8, costNanos: 3_000_000 });
    expect(sumSpend([])).toEqual({ inputTokens: 0, outputTokens: 0, cachedTokens: 0, costNanos: 0 });
    expect([0, 50_000, 1_500_000, 12_345_678, 2_500_000_000, 123_000_000_000].map(formatCost)).toEqual([
      "$0",
      "<$0.0001",
      "$0.0015",
      "$0.012",
      "$2.50",
      "$123",
    ]);
    expect(priceText({ input: 0, output: 0 })).toBe("free");
    expect(priceText(null)).toBe("no price set, counted as $0");
    expect(priceText({ input: 3, output: 15, cachedInput: 0.3 })).toBe("$3 in, $15 out per million tokens (cached $0.3)");
  });
});

describe("the offered models", () => {
  it("come from MODELS with labels and prices, keyless first, and name models as provider:model", () => {
    const env = parseEnv({
      ANTHROPIC_API_KEY: "sk-test",
      MODELS: JSON.stringify([
        { provider: "anthropic", model: "claude-haiku", label: "Claude Haiku", price: { input: 1, output: 5 } },
        { provider: "anthropic", model: "claude-sonnet", label: "Claude Sonnet", price: { input: 3, output: 15, cachedInput: 0.3 } },
        // Not configured (no OpenAI variables): left out.
        { provider: "openai-compatible", model: "gpt-x", price: { input: 1, output: 1 } },
      ]),
    });
    expect(availableModels(env).map(modelKey)).toEqual(["scripted:keyless", "anthropic:claude-haiku", "anthropic:claude-sonnet"]);
    expect(priceOf(env, { provider: "anthropic", model: "claude-sonnet" })).toEqual({ input: 3, output: 15, cachedInput: 0.3 });
    expect(priceOf(env, { provider: "scripted", model: "keyless" })).toEqual({ input: 0, output: 0 });
  });

  it("offer a configured provider's default model with no price (not free), and the keyless model free", () => {
    const env = parseEnv({ OPENAI_API_KEY: "sk-test", OPENAI_MODEL: "gpt-unpriced" });
    expect(availableModels(env).map((o) => [modelKey(o), o.price])).toEqual([
      ["scripted:keyless", { input: 0, output: 0 }],
      ["openai-compatible:gpt-unpriced", null],
    ]);
    // Its steps cost nothing in the figures (there is no price to apply).
    expect(priceOf(env, { provider: "openai-compatible", model: "gpt-unpriced" })).toEqual({ input: 0, output: 0 });
  });
});
