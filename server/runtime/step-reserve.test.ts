import { describe, expect, it } from "vitest";
import { FREE } from "../models/catalog";
import { DEFAULT_OUTPUT_RESERVE_TOKENS, fitOutput, MIN_STEP_OUTPUT_TOKENS, reservationOf, stepNeed } from "./step-reserve";

// What a step may spend at most, and how much output fits in what a limit has left.

const price = { input: 1, output: 2 }; // USD per million tokens: 1,000 and 2,000 nano-USD a token

describe("step reservations", () => {
  it("a step's most: fixed text, history, a compaction when one is due, and the output limit", () => {
    const base = { price: FREE, fixedChars: 400, historyTokens: 1_000, compactionBudgetTokens: 5_000 };
    expect(stepNeed({ ...base, modelLimit: 2_000 })).toEqual({ inputTokens: 1_100, requestTokens: 1_100, outputLimit: 2_000, price: FREE });
    // A model without a limit of its own is reserved (and asked for) the default.
    expect(stepNeed({ ...base, modelLimit: undefined }).outputLimit).toBe(DEFAULT_OUTPUT_RESERVE_TOKENS);
    // Over the compaction budget, the summary call (reading the history) comes first.
    // Its request alone is what the step's start bills.
    expect(stepNeed({ ...base, modelLimit: 2_000, compactionBudgetTokens: 999 })).toMatchObject({ inputTokens: 100 + 1_000 + 1_000 + 2_000, requestTokens: 1_100 });
  });

  it("the whole output limit when it fits; what is left when less does; nothing under the minimum", () => {
    const need = { inputTokens: 1_000, requestTokens: 1_000, outputLimit: 4_000, price: FREE };
    expect(fitOutput(need, { tokens: null, costNanos: null })).toBe(4_000);
    expect(fitOutput(need, { tokens: 10_000, costNanos: null })).toBe(4_000);
    expect(fitOutput(need, { tokens: 3_000, costNanos: null })).toBe(2_000);
    expect(fitOutput(need, { tokens: 1_000 + MIN_STEP_OUTPUT_TOKENS, costNanos: null })).toBe(MIN_STEP_OUTPUT_TOKENS);
    expect(fitOutput(need, { tokens: 1_000 + MIN_STEP_OUTPUT_TOKENS - 1, costNanos: null })).toBeNull();
    expect(fitOutput(need, { tokens: -5, costNanos: null })).toBeNull();
    // A model whose whole limit is under the minimum needs only its limit.
    expect(fitOutput({ ...need, outputLimit: 100 }, { tokens: 1_100, costNanos: null })).toBe(100);
  });

  it("a cost limit counts the input's cost first, then output at its own price", () => {
    const need = { inputTokens: 500, requestTokens: 500, outputLimit: 1_024, price };
    // 2,000,000 nano-USD left: 500,000 for the input, 1,500,000 for 750 output tokens.
    expect(fitOutput(need, { tokens: null, costNanos: 2_000_000 })).toBe(750);
    expect(reservationOf(need, 750)).toEqual({ tokens: 1_250, costNanos: 2_000_000 });
    expect(fitOutput(need, { tokens: null, costNanos: 500_000 })).toBeNull();
    // Both kinds: the tighter wins.
    expect(fitOutput(need, { tokens: 900, costNanos: 2_000_000 })).toBe(400);
    // Free output: only the input has to fit.
    expect(fitOutput({ ...need, price: { input: 1, output: 0 } }, { tokens: null, costNanos: 500_000 })).toBe(1_024);
    expect(fitOutput({ ...need, price: { input: 1, output: 0 } }, { tokens: null, costNanos: 499_999 })).toBeNull();
  });
});
