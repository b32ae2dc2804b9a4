import { z } from "zod";
import { inTx, type Db, type DbOrTx } from "../db/client";
import type { SqlRunner } from "../db/sql";
import { Prisma } from "../db/generated/client";
import type { SessionId } from "../ids";
import { notifyActivity, notifySql } from "../live/activity";
import { NO_SPEND, SpendSchema, spendTokens, type Spend } from "../models/catalog";
import { recordAction, type HumanActor } from "../people/actions";
import { spendOf, SpendRowSchema, teamSpendSums } from "../runtime/sessions";
import { BudgetLimitSchema, type BudgetLimit } from "./budget-input";
import { lockTeam } from "./membership";

// Team budgets (SPEC.md §15): a limit in tokens and/or cost. The spend is read from the
// database (the sessions' spend counters), so every process enforces the same budget. When a
// member finds it reached, the team is marked stopped; every member then ends its turn at its
// next step boundary and starts none (runtime/agent.ts asks `stopIfBudgetReached`), keeping its
// inbox. Raising the budget above the spend clears the mark and wakes the members with input.

export const BudgetViewSchema = z.object({
  limit: BudgetLimitSchema,
  spent: SpendSchema,
  /** Spending has reached a limit: nothing runs until it is raised. */
  reached: z.boolean(),
  /** When a member first found it reached (cleared by a raise above the spend). */
  stoppedAt: z.date().nullable(),
});
export type BudgetView = z.infer<typeof BudgetViewSchema>;

const count = z.coerce.number().int().nonnegative();
const LimitRow = z.object({
  budget_tokens: count.nullable(),
  budget_cost_nanos: count.nullable(),
  budget_stopped_at: z.date().nullable(),
});
type LimitRow = z.infer<typeof LimitRow>;

export function isReached(limit: BudgetLimit, spent: Spend): boolean {
  return (limit.tokens !== null && spendTokens(spent) >= limit.tokens) || (limit.costNanos !== null && spent.costNanos >= limit.costNanos);
}

/** A budget as the room shows it: its limit row (teamBudgetLimit) against a spend. */
export function budgetView(row: LimitRow | undefined, spent: Spend): BudgetView {
  const limit = { tokens: row?.budget_tokens ?? null, costNanos: row?.budget_cost_nanos ?? null };
  return { limit, spent, reached: isReached(limit, spent), stoppedAt: row?.budget_stopped_at ?? null };
}

const BudgetRows = z.array(LimitRow.extend(SpendRowSchema.shape));

async function budgetRow(db: SqlRunner, teamId: string) {
  return BudgetRows.parse(
    await db.$queryRaw`SELECT t.budget_tokens, t.budget_cost_nanos, t.budget_stopped_at, spend.*
      FROM teams t CROSS JOIN ${teamSpendSums(Prisma.sql`t.id`)} spend WHERE t.id = ${teamId}`,
  ).map((r) => ({ row: r, spent: spendOf(r) }))[0];
}

/** The team's budget and what its sessions have spent. */
export async function teamBudget(db: DbOrTx, teamId: SessionId): Promise<BudgetView> {
  const found = await budgetRow(db, teamId);
  return budgetView(found?.row, found?.spent ?? NO_SPEND);
}

const LimitRows = z.array(LimitRow);

/** The team's limits alone, for a reader that has the spend already (the room: one figure everywhere). */
export async function teamBudgetLimit(db: DbOrTx, teamId: SessionId): Promise<LimitRow | undefined> {
  return LimitRows.parse(await db.$queryRaw`SELECT budget_tokens, budget_cost_nanos, budget_stopped_at FROM teams WHERE id = ${teamId}`)[0];
}

const TeamLimitRows = z.array(LimitRow.extend({ team_id: z.string() }));

/**
 * For the runtime, at a turn's start and at every step boundary, inside that transaction: is
 * the session's team over its budget? If so the team is marked stopped (once) and the room is
 * told. The mark is set only if the limit still holds on the row as it is when the update
 * runs, so a raise committed meanwhile wins (the spend only grows, so a stale sum can at most
 * stop one step late).
 */
export async function stopIfBudgetReached(tx: SqlRunner, sessionId: SessionId, reads: SqlRunner = tx): Promise<boolean> {
  // The limits first, in one read: a team without a budget (the usual case) costs no spend sum.
  // (`reads` may send it beside other reads; the writes below go through `tx`, alone.)
  const limits = TeamLimitRows.parse(
    await reads.$queryRaw`SELECT t.id AS team_id, t.budget_tokens, t.budget_cost_nanos, t.budget_stopped_at
      FROM sessions s JOIN teams t ON t.id = s.team_id WHERE s.id = ${sessionId}`,
  )[0];
  if (!limits || (limits.budget_tokens === null && limits.budget_cost_nanos === null)) return false;
  const teamId = limits.team_id;
  const found = await budgetRow(tx, teamId);
  if (!found || !budgetView(found.row, found.spent).reached) return false;
  // The mark and the room's notification in one statement: they commit together.
  const marked = MarkedRows.parse(
    await tx.$queryRaw`WITH marked AS (
        UPDATE teams SET budget_stopped_at = COALESCE(budget_stopped_at, now())
        WHERE id = ${teamId}
          AND ((budget_tokens IS NOT NULL AND budget_tokens <= ${spendTokens(found.spent)})
            OR (budget_cost_nanos IS NOT NULL AND budget_cost_nanos <= ${found.spent.costNanos}))
        RETURNING id
      )
      SELECT count(*)::int AS n FROM marked
        LEFT JOIN LATERAL (SELECT ${notifySql(teamId, "team")} WHERE ${found.row.budget_stopped_at === null}) AS told ON true`,
  );
  return marked[0]!.n > 0;
}

const SessionIdRows = z.array(z.object({ id: z.string() }));
const MarkedRows = z.array(z.object({ n: z.number().int() }));

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
      const waiting = SessionIdRows.parse(
        await tx.$queryRaw`SELECT s.id FROM sessions s WHERE s.team_id = ${by.teamId}
          AND EXISTS (SELECT 1 FROM inbox_items i WHERE i.session_id = s.id)`,
      );
      for (const s of waiting) await notifyActivity(tx, s.id, "inbox");
    }
    await notifyActivity(tx, by.teamId, "team");
    return { limit, spent: before.spent, reached, stoppedAt: reached ? before.stoppedAt : null };
  });
}
