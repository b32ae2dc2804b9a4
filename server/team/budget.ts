import { z } from "zod";
import { inTx, type Db, type DbOrTx } from "../db/client";
import type { SqlRunner } from "../db/sql";
import { Prisma } from "../db/generated/client";
import type { SessionId } from "../ids";
import { notifyActivity, notifySql } from "../db/notify";
import { NO_SPEND, SpendSchema, type Spend } from "../models/catalog";
import { spendTokens } from "../../shared/model-text";
import { tokensOfChars } from "../models/estimate";
import { recordAction, type HumanActor } from "../people/actions";
import { leaseLost } from "../runtime/session-log";
import { spendOf, SpendRowSchema, teamSpendSums } from "../runtime/sessions";
import { fitOutput, MIN_STEP_OUTPUT_TOKENS, reservationOf, StepWaitAborted, type StepNeed, type StepReserver, type StepRoom } from "../runtime/step-reserve";
import type { Lease } from "../runtime/session-log";
import { abortableWait } from "../abortable";
import { recordTeamEvent } from "../runtime/team-events";
import { BudgetLimitSchema, type BudgetLimit } from "../../shared/budget-input";
import { lockTeam } from "../members/membership";

// Team budgets (SPEC.md §15, §17): a limit in tokens and/or cost, binding. Before each step a
// member reserves the step's most against the budget (`reserveStep`); the spend and the
// reservations are read from the database, so every process enforces the same budget. When a
// step does not fit, the team is marked stopped; every member then ends its turn at its next
// step boundary and starts none, keeping its inbox. Raising the budget above the spend clears
// the mark and wakes the members with input.

export const BudgetViewSchema = z.object({
  limit: BudgetLimitSchema,
  spent: SpendSchema,
  /** Spending has reached a limit, or the next step would cross it: nothing runs until it is raised. */
  reached: z.boolean(),
  /** When a member first found it reached (cleared by a raise above the spend). */
  stoppedAt: z.date().nullable(),
  /** The least the step that found it reached needed (null: not stopped, or stopped before this was recorded). */
  need: z.object({ tokens: z.number(), costNanos: z.number() }).nullable(),
});
export type BudgetView = z.infer<typeof BudgetViewSchema>;

const count = z.coerce.number().int().nonnegative();
const LimitRow = z.object({
  budget_tokens: count.nullable(),
  budget_cost_nanos: count.nullable(),
  budget_stopped_at: z.date().nullable(),
  budget_need_tokens: count.nullable().optional(),
  budget_need_cost_nanos: count.nullable().optional(),
});
type LimitRow = z.infer<typeof LimitRow>;

export function isReached(limit: BudgetLimit, spent: Spend): boolean {
  return (limit.tokens !== null && spendTokens(spent) >= limit.tokens) || (limit.costNanos !== null && spent.costNanos >= limit.costNanos);
}

/** A budget as the room shows it: its limit row (teamBudgetLimit) against a spend. */
export function budgetView(row: LimitRow | undefined, spent: Spend): BudgetView {
  const limit = { tokens: row?.budget_tokens ?? null, costNanos: row?.budget_cost_nanos ?? null };
  const stoppedAt = row?.budget_stopped_at ?? null;
  const need = stoppedAt && row?.budget_need_tokens != null ? { tokens: row.budget_need_tokens, costNanos: row.budget_need_cost_nanos ?? 0 } : null;
  return { limit, spent, reached: stoppedAt !== null || isReached(limit, spent), stoppedAt, need };
}

const BudgetRows = z.array(LimitRow.extend(SpendRowSchema.shape));

async function budgetRow(db: SqlRunner, teamId: string) {
  return BudgetRows.parse(
    await db.$queryRaw`SELECT t.budget_tokens, t.budget_cost_nanos, t.budget_stopped_at, t.budget_need_tokens, t.budget_need_cost_nanos, spend.*
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
  return LimitRows.parse(
    await db.$queryRaw`SELECT budget_tokens, budget_cost_nanos, budget_stopped_at, budget_need_tokens, budget_need_cost_nanos FROM teams WHERE id = ${teamId}`,
  )[0];
}

const TeamLimitRows = z.array(LimitRow.extend({ team_id: z.string() }));
const RoomRows = z.array(
  LimitRow.extend({ spent_tokens: count, spent_cost_nanos: count, held_tokens: count, held_cost_nanos: count, pending_chars: count }),
);

/** How long a step waits for other members' steps in flight to settle before the team stops. */
export const ROOM_WAIT_MS = 120_000;

/**
 * For the runtime, before a turn's or step's start (runtime/step-reserve.ts): room for the
 * step's most (estimated input, with the input it will claim, plus its output limit) next to
 * what the team has spent and its other members' steps in flight hold. It fits: the
 * reservation is written on the session row and the output limit to ask for returned. It would
 * fit but for the steps in flight: it waits for them to settle (their replies release what they
 * did not spend), up to ROOM_WAIT_MS. It does not fit against the spend itself (or the wait ran
 * out): the team is marked stopped (once; the room and the outbox are told in the same commit)
 * and "budget" returned. The team row lock serialises reservations and budget changes, and the
 * read after it sees every reservation and spend committed before it.
 */
export const reserveStep: StepReserver = async (db, sessionId, lease, reads, need, signal) => {
  // The limits first, in one read: a team without a budget (the usual case) costs nothing more.
  const limits = TeamLimitRows.parse(
    await reads.$queryRaw`SELECT t.id AS team_id, t.budget_tokens, t.budget_cost_nanos, t.budget_stopped_at
      FROM sessions s JOIN teams t ON t.id = s.team_id WHERE s.id = ${sessionId}`,
  )[0];
  if (!limits) return { maxOutputTokens: null };
  if (limits.budget_tokens === null && limits.budget_cost_nanos === null) {
    return { maxOutputTokens: null, holds: Prisma.sql`NOT EXISTS (SELECT 1 FROM teams t WHERE t.id = ${limits.team_id} AND (t.budget_tokens IS NOT NULL OR t.budget_cost_nanos IS NOT NULL))` };
  }
  if (limits.budget_stopped_at !== null) return "budget";
  const step = need();
  const deadline = Date.now() + ROOM_WAIT_MS;
  for (let pause = 100; ; pause = Math.min(pause * 2, 2_000)) {
    const room = await tryReserve(db, limits.team_id, sessionId, lease, step, Date.now() >= deadline);
    if (room !== "wait") return room;
    if ((await abortableWait({ ms: pause, signal })) === "aborted") throw new StepWaitAborted();
  }
};

/** One attempt: the room, "budget" (stopped), or "wait" (only steps in flight are in the way, and `last` is not set). */
async function tryReserve(db: Db, teamId: string, sessionId: SessionId, lease: Lease, step: StepNeed, last: boolean): Promise<StepRoom | "wait"> {
  return db.sqlTx(async (tx) => {
    await tx.$queryRaw`SELECT 1 FROM teams WHERE id = ${teamId} FOR UPDATE`;
    const row = RoomRows.parse(
      await tx.$queryRaw`SELECT t.budget_tokens, t.budget_cost_nanos, t.budget_stopped_at,
          COALESCE(sum(s.spent_input_tokens + s.spent_output_tokens), 0) AS spent_tokens,
          COALESCE(sum(s.spent_cost_nanos), 0) AS spent_cost_nanos,
          COALESCE(sum(s.reserved_tokens) FILTER (WHERE s.id <> ${sessionId}), 0) AS held_tokens,
          COALESCE(sum(s.reserved_cost_nanos) FILTER (WHERE s.id <> ${sessionId}), 0) AS held_cost_nanos,
          (SELECT COALESCE(sum(length(i.text)), 0) FROM inbox_items i WHERE i.session_id = ${sessionId}) AS pending_chars
        FROM teams t JOIN sessions s ON s.team_id = t.id WHERE t.id = ${teamId} GROUP BY t.id`,
    )[0];
    if (!row) return { maxOutputTokens: null };
    if (row.budget_stopped_at !== null) return "budget";
    const withInput = { ...step, inputTokens: step.inputTokens + tokensOfChars(row.pending_chars) };
    const left = (limit: number | null, used: number) => (limit === null ? null : limit - used);
    const output = fitOutput(withInput, {
      tokens: left(row.budget_tokens, row.spent_tokens + row.held_tokens),
      costNanos: left(row.budget_cost_nanos, row.spent_cost_nanos + row.held_cost_nanos),
    });
    if (output === null) {
      const fitsSpendAlone =
        fitOutput(withInput, { tokens: left(row.budget_tokens, row.spent_tokens), costNanos: left(row.budget_cost_nanos, row.spent_cost_nanos) }) !== null;
      if (fitsSpendAlone && !last) return "wait";
      // The least it needs: its input and the smallest output a step starts with.
      const least = reservationOf(withInput, Math.min(MIN_STEP_OUTPUT_TOKENS, withInput.outputLimit));
      await tx.$executeRaw`UPDATE teams SET budget_stopped_at = now(), budget_need_tokens = ${least.tokens}, budget_need_cost_nanos = ${least.costNanos}
        WHERE id = ${teamId}`;
      await tx.$queryRaw`SELECT ${notifySql(teamId, "team")}`;
      // Once per stop: the mark was not set, and the team row is locked.
      const leftTokens = row.budget_tokens === null ? undefined : row.budget_tokens - row.spent_tokens;
      await recordTeamEvent(tx, teamId, `budget:${teamId}:${Date.now()}`, { kind: "budget.reached", needTokens: least.tokens, leftTokens });
      return "budget";
    }
    const held = reservationOf(withInput, output);
    const fenced = await tx.$executeRaw`UPDATE sessions SET reserved_tokens = ${held.tokens}, reserved_cost_nanos = ${held.costNanos}
      WHERE id = ${sessionId} AND lease_owner = ${lease.owner} AND lease_token = ${lease.token}`;
    if (fenced === 0) throw leaseLost(sessionId);
    return { maxOutputTokens: output };
  });
}

const SessionIdRows = z.array(z.object({ id: z.string() }));

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
        budget_stopped_at = CASE WHEN ${reached} THEN budget_stopped_at ELSE NULL END,
        budget_need_tokens = CASE WHEN ${reached} THEN budget_need_tokens ELSE NULL END,
        budget_need_cost_nanos = CASE WHEN ${reached} THEN budget_need_cost_nanos ELSE NULL END
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
    return { limit, spent: before.spent, reached, stoppedAt: reached ? before.stoppedAt : null, need: reached ? before.need : null };
  });
}
