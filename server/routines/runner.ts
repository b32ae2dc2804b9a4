import { z } from "zod";
import { inTx, type Db } from "../db/client";
import type { SqlRunner } from "../db/sql";
import { recordTeamEvent } from "../runtime/team-events";
import { Kickable } from "../team/kickable";
import { nextTime, ScheduleSchema } from "./schedule";
import { queueRoutineRun, routineView } from "./store";

// Routines on their schedule (SPEC.md §21), exactly once per scheduled time: a process claims a
// due routine (FOR UPDATE SKIP LOCKED: processes share the work and never take the same one),
// and in the same transaction queues its prompt, records the run and moves the routine to its
// next time. A process that dies holding the claim commits nothing; the lock goes with its
// connection and another process runs that time. A unique (routine, time) row makes a second
// run of one time impossible whatever happens.

/** A time more than this late counts as missed (nothing ran while it was due): the routine's policy decides. */
export const MISSED_AFTER_MS = 5 * 60_000;

export type SkipReason = "missed" | "overlap" | "owner_left";

/** Test hook: runs after a routine is claimed, before anything of its run is written (a crash window). */
export const runnerHooks: { afterClaim?: (routineId: string, tx: SqlRunner) => Promise<void> } = {};

/** The previous run's prompt is still waiting, or the turn it started has not ended. */
async function previousRunWorks(tx: SqlRunner, routineId: string, teamId: string): Promise<boolean> {
  const [row] = z.array(z.object({ working: z.boolean() })).parse(
    await tx.$queryRaw`SELECT COALESCE((
        SELECT EXISTS (SELECT 1 FROM inbox_items i WHERE i.session_id = ${teamId} AND i.id = r.item_id)
            OR EXISTS (SELECT 1 FROM session_events u WHERE u.session_id = ${teamId} AND u.message_id = r.item_id
                         AND NOT EXISTS (SELECT 1 FROM session_events e WHERE e.session_id = ${teamId} AND e.kind = 'turn_end' AND e.seq > u.seq))
          FROM routine_runs r WHERE r.routine_id = ${routineId} AND r.status = 'queued' ORDER BY r.id DESC LIMIT 1), false) AS working`,
  );
  return row!.working;
}

/** The owner may still prompt the team (a member or owner of it). */
async function ownerMayAct(tx: SqlRunner, teamId: string, ownerId: string): Promise<boolean> {
  const rows = z.array(z.unknown()).parse(await tx.$queryRaw`SELECT 1 FROM team_people WHERE team_id = ${teamId} AND user_id = ${ownerId} AND role IN ('member', 'owner')`);
  return rows.length > 0;
}

/**
 * Runs one due routine (its prompt queued, or its time skipped by policy, recorded either way)
 * and moves it to its next time. False when none is due.
 */
export async function runDueRoutine(db: Db, now = new Date()): Promise<boolean> {
  return inTx(db, async (tx) => {
    const [claimed] = z
      .array(z.object({ id: z.string() }))
      .parse(await tx.$queryRaw`SELECT id FROM routines WHERE next_run_at <= ${now} ORDER BY next_run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`);
    if (!claimed) return false;
    await runnerHooks.afterClaim?.(claimed.id, tx);
    const r = routineView(await tx.routine.findUniqueOrThrow({ where: { id: claimed.id } }));
    const due = r.nextRunAt!;
    const late = now.getTime() - due.getTime() > MISSED_AFTER_MS;
    // Every time up to now is dealt with by this run (missed ones collapse into it).
    const next = nextTime(ScheduleSchema.parse(r.schedule), now > due ? now : due);
    let skipped: SkipReason | null = null;
    if (late && r.missed === "skip") skipped = "missed";
    else if (!(await ownerMayAct(tx, r.teamId, r.owner.id))) skipped = "owner_left";
    else if (r.overlap === "skip" && (await previousRunWorks(tx, r.id, r.teamId))) skipped = "overlap";
    if (skipped) {
      await tx.$executeRaw`INSERT INTO routine_runs (routine_id, team_id, scheduled_for, trigger, status, reason)
        VALUES (${r.id}, ${r.teamId}, ${due}, ${late ? "recovery" : "schedule"}, 'skipped', ${skipped})`;
      await recordTeamEvent(tx, r.teamId, `routine:${r.id}:${due.toISOString()}`, {
        kind: "routine.skipped",
        routineId: r.id,
        name: r.name,
        ownerId: r.owner.id,
        reason: skipped,
      });
    } else {
      await queueRoutineRun(tx, r, { scheduledFor: due, trigger: late ? "recovery" : "schedule" });
    }
    // An owner who left stops the routine: it would be skipped every time.
    await tx.routine.update({ where: { id: r.id }, data: skipped === "owner_left" ? { paused: true, nextRunAt: null } : { nextRunAt: next } });
    return true;
  });
}

/** A process's routine runner: kicked on every sweep, it runs every due routine. */
export function createRoutineRunner(db: Db, log: (line: string) => void): Kickable {
  return new Kickable("routines", () => runDueRoutine(db), log);
}
