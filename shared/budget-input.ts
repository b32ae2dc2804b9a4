import { z } from "zod";
import { int4 } from "./input-guard";

// What a team budget may be: import-safe (no database), so the room's form checks the same rule
// the procedure does. Null: no limit of that kind. Costs are stored in nano-USD.

/** The largest cost budget, in USD. */
const MAX_COST_USD = 1_000_000;

export const BudgetInputSchema = z.object({
  tokens: int4(1).nullable(),
  costUsd: z.number().positive().max(MAX_COST_USD).nullable(),
});
export type BudgetInput = z.infer<typeof BudgetInputSchema>;

/** The budget as stored and shown: tokens, and cost in nano-USD. */
export const BudgetLimitSchema = z.object({
  tokens: int4(1).nullable(),
  costNanos: z.number().int().positive().max(MAX_COST_USD * 1e9).nullable(),
});
export type BudgetLimit = z.infer<typeof BudgetLimitSchema>;

/** nano-USD, at least 1 (a positive budget never rounds to "no budget"). */
export function costNanosOf(costUsd: number | null): number | null {
  return costUsd === null ? null : Math.max(1, Math.round(costUsd * 1e9));
}
