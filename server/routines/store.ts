import { z } from "zod";
import { inTx, type Db, type Tx } from "../db/client";
import type { SqlRunner } from "../db/sql";
import { AppError } from "../errors";
import { newRoutineId, type SessionId } from "../ids";
import { recordAction, type HumanActor } from "../people/actions";
import { PersonRefSchema, type PersonRef } from "../person-ref";
import { enqueue } from "../runtime/inbox";
import { LIMITS } from "../../shared/limits";
import { nextTime, ScheduleSchema } from "./schedule";

// A team's routines (SPEC.md §21): a person's prompt to the Lead on a schedule. Members and
// owners create, edit, pause, resume, run now and delete them, each recorded (and audited) in
// its own transaction; whoever saves a routine owns it, and its runs are that person's prompts.
// Running on schedule is runner.ts; who may is the caller's check.

export const MISSED_POLICIES = ["skip", "run_once"] as const;
export const OVERLAP_POLICIES = ["skip", "queue"] as const;

export const RoutineInputSchema = z.object({
  name: z.string().trim().min(1).max(LIMITS.routineNameChars),
  prompt: z
    .string()
    .trim()
    .min(1)
    .refine((t) => Buffer.byteLength(t, "utf8") <= LIMITS.promptBytes, `At most ${LIMITS.promptBytes} bytes`),
  schedule: ScheduleSchema,
  /** A time missed while nothing ran: skip it, or run once on recovery. */
  missed: z.enum(MISSED_POLICIES),
  /** A time that comes while the previous run still works: skip it (recorded), or queue it. */
  overlap: z.enum(OVERLAP_POLICIES),
});
export type RoutineInput = z.infer<typeof RoutineInputSchema>;

export const RoutineViewSchema = RoutineInputSchema.extend({
  id: z.string(),
  teamId: z.string(),
  owner: PersonRefSchema,
  paused: z.boolean(),
  nextRunAt: z.date().nullable(),
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type RoutineView = z.infer<typeof RoutineViewSchema>;

type Row = Awaited<ReturnType<Db["routine"]["findFirstOrThrow"]>>;
export function routineView(r: Row): RoutineView {
  return RoutineViewSchema.parse({
    id: r.id,
    teamId: r.teamId,
    name: r.name,
    prompt: r.prompt,
    schedule: r.schedule,
    missed: r.missed,
    overlap: r.overlap,
    owner: { id: r.ownerId, name: r.ownerName },
    paused: r.paused,
    nextRunAt: r.nextRunAt,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  });
}

async function routineOf(tx: Tx, teamId: SessionId, routineId: string, lock = false): Promise<Row> {
  if (lock) await tx.$executeRaw`SELECT 1 FROM routines WHERE id = ${routineId} AND team_id = ${teamId} FOR UPDATE`;
  const r = await tx.routine.findFirst({ where: { id: routineId, teamId } });
  if (!r) throw new AppError("ROUTINE_NOT_FOUND", "No such routine in this team", { routineId });
  return r;
}

export async function listRoutines(db: Db, teamId: SessionId): Promise<RoutineView[]> {
  return (await db.routine.findMany({ where: { teamId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] })).map(routineView);
}

/** Creates a routine owned by `by`, its first run at the schedule's next time. */
export async function createRoutine(db: Db, by: HumanActor, input: RoutineInput, now = new Date()): Promise<RoutineView> {
  const nextRunAt = nextTime(input.schedule, now);
  return inTx(db, async (tx) => {
    const count = await tx.routine.count({ where: { teamId: by.teamId } });
    if (count >= LIMITS.routinesPerTeam) throw new AppError("INVALID_INPUT", `A team has at most ${LIMITS.routinesPerTeam} routines`);
    const r = await tx.routine.create({
      data: { id: newRoutineId(), teamId: by.teamId, ...input, schedule: input.schedule, ownerId: by.person.id, ownerName: by.person.name, nextRunAt },
    });
    await recordAction(tx, by, "routine_created", { detail: { routineId: r.id, name: r.name } });
    return routineView(r);
  });
}

/** Saves a routine's new definition: its next time follows the new schedule, and `by` owns it now. */
export async function updateRoutine(db: Db, by: HumanActor, routineId: string, input: RoutineInput, now = new Date()): Promise<RoutineView> {
  const next = nextTime(input.schedule, now);
  return inTx(db, async (tx) => {
    const before = await routineOf(tx, by.teamId, routineId, true);
    const r = await tx.routine.update({
      where: { id: routineId },
      data: { ...input, schedule: input.schedule, ownerId: by.person.id, ownerName: by.person.name, nextRunAt: before.paused ? null : next, updatedAt: now },
    });
    await recordAction(tx, by, "routine_changed", { detail: { routineId, change: "edited", name: r.name } });
    return routineView(r);
  });
}

/** Pauses (no next time) or resumes (the next time from now) a routine. */
export async function setRoutinePaused(db: Db, by: HumanActor, routineId: string, paused: boolean, now = new Date()): Promise<RoutineView> {
  return inTx(db, async (tx) => {
    const before = await routineOf(tx, by.teamId, routineId, true);
    const nextRunAt = paused ? null : nextTime(ScheduleSchema.parse(before.schedule), now);
    const r = await tx.routine.update({ where: { id: routineId }, data: { paused, nextRunAt, updatedAt: now } });
    await recordAction(tx, by, "routine_changed", { detail: { routineId, change: paused ? "paused" : "resumed" } });
    return routineView(r);
  });
}

export async function deleteRoutine(db: Db, by: HumanActor, routineId: string): Promise<void> {
  await inTx(db, async (tx) => {
    const r = await routineOf(tx, by.teamId, routineId, true);
    await tx.routine.delete({ where: { id: routineId } });
    await recordAction(tx, by, "routine_deleted", { detail: { routineId, name: r.name, prompt: r.prompt } });
  });
}

/**
 * Queues a routine's prompt to its team's Lead as its owner's (the Queue adapter: its own turn),
 * and records the run, in the caller's transaction.
 */
export async function queueRoutineRun(
  tx: SqlRunner,
  r: { id: string; teamId: string; name: string; prompt: string; owner: PersonRef },
  run: { scheduledFor: Date; trigger: "schedule" | "recovery" | "manual" },
): Promise<string> {
  const item = await enqueue(tx, r.teamId as SessionId, {
    mode: "queue",
    text: r.prompt,
    source: { kind: "human", userId: r.owner.id, name: r.owner.name, routine: { id: r.id, name: r.name } },
  });
  await tx.$executeRaw`INSERT INTO routine_runs (routine_id, team_id, scheduled_for, trigger, status, item_id)
    VALUES (${r.id}, ${r.teamId}, ${run.scheduledFor}, ${run.trigger}, 'queued', ${item.id})`;
  return item.id;
}

/** A person runs a routine now, whatever its schedule (queued even while the previous run works). */
export async function runRoutineNow(db: Db, by: HumanActor, routineId: string, now = new Date()): Promise<{ itemId: string }> {
  return inTx(db, async (tx) => {
    const r = routineView(await routineOf(tx, by.teamId, routineId, true));
    const itemId = await queueRoutineRun(tx, r, { scheduledFor: now, trigger: "manual" });
    await recordAction(tx, by, "routine_changed", { detail: { routineId, change: "run_now", itemId } });
    return { itemId };
  });
}

export const RUN_STATES = ["waiting", "running", "completed", "aborted", "error", "interrupted", "budget", "skipped"] as const;
export const RoutineRunViewSchema = z.object({
  id: z.string(),
  scheduledFor: z.date(),
  trigger: z.enum(["schedule", "recovery", "manual"]),
  /** skipped; or the queued prompt's state: waiting in the inbox, its turn running, or how that turn ended. */
  state: z.enum(RUN_STATES),
  reason: z.string().nullable(),
  /** The prompt's event in the Lead's transcript (null until its turn takes it). */
  seq: z.number().int().nullable(),
  createdAt: z.date(),
});
export type RoutineRunView = z.infer<typeof RoutineRunViewSchema>;

const RunRows = z.array(
  z.object({
    id: z.bigint(),
    scheduled_for: z.date(),
    trigger: z.enum(["schedule", "recovery", "manual"]),
    status: z.enum(["queued", "skipped"]),
    reason: z.string().nullable(),
    seq: z.number().int().nullable(),
    ended: z.string().nullable(),
    created_at: z.date(),
  }),
);

/** A routine's runs, newest first, each with the state of its prompt's turn. */
export async function routineRuns(db: Db, teamId: SessionId, routineId: string): Promise<RoutineRunView[]> {
  await inTx(db, (tx) => routineOf(tx, teamId, routineId));
  const rows = RunRows.parse(
    await db.sql.$queryRaw`SELECT r.id, r.scheduled_for, r.trigger, r.status, r.reason, u.seq, e.reason AS ended, r.created_at
        FROM routine_runs r
        LEFT JOIN session_events u ON u.session_id = r.team_id AND u.message_id = r.item_id
        LEFT JOIN LATERAL (SELECT payload->>'reason' AS reason FROM session_events e
                            WHERE e.session_id = r.team_id AND e.kind = 'turn_end' AND e.seq > u.seq ORDER BY e.seq LIMIT 1) e ON true
       WHERE r.routine_id = ${routineId}
       ORDER BY r.id DESC LIMIT ${LIMITS.routineRunsShown}`,
  );
  return rows.map((r) => ({
    id: r.id.toString(),
    scheduledFor: r.scheduled_for,
    trigger: r.trigger,
    state: r.status === "skipped" ? "skipped" : r.seq === null ? "waiting" : ((r.ended as RoutineRunView["state"] | null) ?? "running"),
    reason: r.reason,
    seq: r.seq,
    createdAt: r.created_at,
  }));
}
