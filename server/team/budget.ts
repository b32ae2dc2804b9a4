import { z } from "zod";
import { inTx, type Db, type DbOrTx } from "../db/client";
import type { SessionId } from "../ids";
import { notifyActivity } from "../live/activity";
import { recordAction, type HumanActor } from "../people/actions";
import { lockTeam } from "./membership";

// Team budgets (SPEC.md §15): a limit in tokens and/or cost. The spend is read from the
// database (the sessions' spend counters), so every process enforces the same budget. When a
// member finds it reached, the team is marked stopped; every member then ends its turn at its
// next step boundary and starts none (runtime/agent.ts asks `stopIfBudgetReached`), keeping its
// inbox. Raising the budget above the spend clears the mark and wakes the members with input.

/** Tokens count input (cached included) and output, as the providers report them. */
export const BudgetLimitSchema = z.object({
  tokens: z.number().int().positive().nullable(),
  costNanos: z.number().int().positive().nullable(),
});
export type BudgetLimit = z.infer<typeof BudgetLimitSchema>;

export const BudgetSpentSchema = z.object({ tokens: z.number().int().nonnegative(), costNanos: z.number().int().nonnegative() });
export type BudgetSpent = z.infer<typeof BudgetSpentSchema>;

export const BudgetViewSchema = z.object({
  limit: BudgetLimitSchema,
  spent: BudgetSpentSchema,
  /** Spending has reached a limit: nothing runs until it is raised. */
  reached: z.boolean(),
  /** When a member first found it reached (cleared by a raise above the spend). */
  stoppedAt: z.date().nullable(),
});
export type BudgetView = z.infer<typeof BudgetViewSchema>;

const count = z.coerce.number().int().nonnegative();
const BudgetRow = z.object({
  team_id: z.string(),
  budget_tokens: count.nullable(),
  budget_cost_nanos: count.nullable(),
  budget_stopped_at: z.date().nullable(),
  tokens: count,
  cost_nanos: count,
});

export function isReached(limit: BudgetLimit, spent: BudgetSpent): boolean {
  return (limit.tokens !== null && spent.tokens >= limit.tokens) || (limit.costNanos !== null && spent.costNanos >= limit.costNanos);
}

function viewOf(row: z.infer<typeof BudgetRow>): BudgetView {
  const limit = { tokens: row.budget_tokens, costNanos: row.budget_cost_nanos };
  const spent = { tokens: row.tokens, costNanos: row.cost_nanos };
  return { limit, spent, reached: isReached(limit, spent), stoppedAt: row.budget_stopped_at };
}

async function budgetRows(db: DbOrTx, teamId: string) {
  return z.array(BudgetRow).parse(
    await db.$queryRaw`SELECT t.id AS team_id, t.budget_tokens, t.budget_cost_nanos, t.budget_stopped_at,
        s.tokens, s.cost_nanos
      FROM teams t, LATERAL (
        SELECT COALESCE(SUM(spent_input_tokens + spent_output_tokens), 0)::bigint AS tokens,
               COALESCE(SUM(spent_cost_nanos), 0)::bigint AS cost_nanos
        FROM sessions WHERE team_id = t.id) s
      WHERE t.id = ${teamId}`,
  );
}

/** The team's budget and what its sessions have spent. */
export async function teamBudget(db: DbOrTx, teamId: SessionId): Promise<BudgetView> {
  const row = (await budgetRows(db, teamId))[0];
  return row ? viewOf(row) : { limit: { tokens: null, costNanos: null }, spent: { tokens: 0, costNanos: 0 }, reached: false, stoppedAt: null };
}

/**
 * For the runtime, at a turn's start and at every step boundary, inside that transaction: is
 * the session's team over its budget? If so the team is marked stopped (once) and the room is
 * told. The mark is set only if the limit still holds on the row as it is when the update
 * runs, so a raise committed meanwhile wins (the spend only grows, so a stale sum can at most
 * stop one step late).
 */
export async function stopIfBudgetReached(tx: DbOrTx, sessionId: SessionId): Promise<boolean> {
  const teamRows = z
    .array(z.object({ team_id: z.string().nullable() }))
    .parse(await tx.$queryRaw`SELECT team_id FROM sessions WHERE id = ${sessionId}`);
  const teamId = teamRows[0]?.team_id;
  if (!teamId) return false;
  const row = (await budgetRows(tx, teamId))[0];
  if (!row || (row.budget_tokens === null && row.budget_cost_nanos === null)) return false;
  if (!viewOf(row).reached) return false;
  const marked = z.array(z.object({ id: z.string() })).parse(
    await tx.$queryRaw`UPDATE teams SET budget_stopped_at = COALESCE(budget_stopped_at, now())
      WHERE id = ${teamId}
        AND ((budget_tokens IS NOT NULL AND budget_tokens <= ${row.tokens}) OR (budget_cost_nanos IS NOT NULL AND budget_cost_nanos <= ${row.cost_nanos}))
      RETURNING id`,
  );
  if (marked.length === 0) return false;
  if (row.budget_stopped_at === null) await notifyActivity(tx, teamId, "state");
  return true;
}

/**
 * An owner or member sets the team's budget (null: no limit of that kind). A budget above the
 * spend clears the stop and wakes every member with pending input, in this process or another.
 */
export async function setBudget(db: Db, by: HumanActor, limit: BudgetLimit): Promise<BudgetView> {
  return inTx(db, async (tx) => {
    // The team row lock orders this against a member marking the team stopped.
    await lockTeam(tx, by.teamId);
    const before = await teamBudget(tx, by.teamId);
    const reached = isReached(limit, before.spent);
    await tx.$executeRaw`UPDATE teams SET budget_tokens = ${limit.tokens}, budget_cost_nanos = ${limit.costNanos},
        budget_stopped_at = CASE WHEN ${reached} THEN budget_stopped_at ELSE NULL END
      WHERE id = ${by.teamId}`;
    await recordAction(tx, by, "budget_set", { detail: { tokens: limit.tokens, costNanos: limit.costNanos } });
    if (!reached) {
      const waiting = z.array(z.object({ id: z.string() })).parse(
        await tx.$queryRaw`SELECT s.id FROM sessions s WHERE s.team_id = ${by.teamId}
          AND EXISTS (SELECT 1 FROM inbox_items i WHERE i.session_id = s.id)`,
      );
      for (const s of waiting) await notifyActivity(tx, s.id, "inbox");
    }
    await notifyActivity(tx, by.teamId, "state");
    return { limit, spent: before.spent, reached, stoppedAt: reached ? before.stoppedAt : null };
  });
}
