import { z } from "zod";
import { int4 } from "../input-guard";

// What a person may set as a team budget: import-safe (no database), so the room's form checks
// the same rule the procedure does. Null: no limit of that kind.

export const BudgetInputSchema = z.object({
  tokens: int4(1).nullable(),
  costUsd: z.number().positive().max(1_000_000).nullable(),
});
export type BudgetInput = z.infer<typeof BudgetInputSchema>;

/** nano-USD, at least 1 (a positive budget never rounds to "no budget"). */
export function costNanosOf(costUsd: number | null): number | null {
  return costUsd === null ? null : Math.max(1, Math.round(costUsd * 1e9));
}
