import { describe, expect } from "vitest";
import { TRPCError } from "@trpc/server";
import { isAppError } from "../../errors";
import { callerTest } from "../../testing/app-tests";
import { createTestPerson } from "../../testing/people";
import { createCaller } from "../root";
import { waitFor } from "../../testing/runtime-harness";

// The routines API in-process: a member creates a routine (its next five times shown first),
// edits (and so owns) it, pauses, resumes, runs it now and deletes it, each in the audit log;
// viewers read it; a schedule that does not parse is a typed error naming the field, and saves
// nothing. Access per role is in access.test.ts; bad input in fuzz.test.ts.

const it = callerTest({}, "Olive Routine");

async function refusal(p: Promise<unknown>): Promise<{ code: string; field?: unknown }> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  const app = e instanceof TRPCError ? e.cause : e;
  if (!isAppError(app)) throw new Error(`expected an AppError, got ${String(e)}`);
  return { code: app.code, field: app.details?.field };
}

const daily = { name: "Standup notes", prompt: "Write today's standup notes", schedule: { kind: "cron" as const, cron: "0 9 * * 1-5", timeZone: "Europe/Berlin" }, missed: "skip" as const, overlap: "skip" as const };

describe("routines router", () => {
  it("creates, previews, edits, pauses, resumes, runs now and deletes a routine, audited", async ({ ctx, trpc, rt }) => {
    const teamId = (await trpc.session.create({ title: "Routine team" })).id;
    const max = await createTestPerson(rt.db, "Max Routine");
    const vic = await createTestPerson(rt.db, "Vic Routine");
    await rt.db.teamPerson.createMany({ data: [{ teamId, userId: max.id, role: "member" }, { teamId, userId: vic.id, role: "viewer" }] });
    const asMax = createCaller({ ...ctx, person: max });
    const asVic = createCaller({ ...ctx, person: vic });

    const preview = await trpc.routines.preview({ schedule: daily.schedule });
    expect(preview).toHaveLength(5);
    expect(preview.every((d, i) => i === 0 || d > preview[i - 1]!)).toBe(true);
    expect(await refusal(trpc.routines.preview({ schedule: { kind: "cron", cron: "0 25 * * *", timeZone: "UTC" } }))).toEqual({ code: "ROUTINE_INVALID_SCHEDULE", field: "cron" });
    expect(await refusal(trpc.routines.create({ teamId, ...daily, schedule: { ...daily.schedule, timeZone: "Europe/Atlantis" } }))).toEqual({
      code: "ROUTINE_INVALID_SCHEDULE",
      field: "timeZone",
    });
    expect(await trpc.routines.list({ teamId })).toEqual([]);
    expect(await refusal(asVic.routines.create({ teamId, ...daily }))).toMatchObject({ code: "FORBIDDEN" });

    const created = await trpc.routines.create({ teamId, ...daily });
    expect(created).toMatchObject({ name: "Standup notes", owner: { name: "Olive Routine" }, paused: false, nextRunAt: preview[0] });
    const edited = await asMax.routines.update({ teamId, routineId: created.id, ...daily, schedule: { kind: "interval", every: 2, unit: "hours" }, overlap: "queue" });
    expect(edited).toMatchObject({ owner: { name: "Max Routine" }, overlap: "queue", schedule: { kind: "interval", every: 2 } });
    expect((await asMax.routines.setPaused({ teamId, routineId: created.id, paused: true })).nextRunAt).toBeNull();
    expect((await asMax.routines.setPaused({ teamId, routineId: created.id, paused: false })).nextRunAt).toBeInstanceOf(Date);

    const { itemId } = await asMax.routines.runNow({ teamId, routineId: created.id });
    const [run] = await asVic.routines.runs({ teamId, routineId: created.id });
    expect(run).toMatchObject({ trigger: "manual" });
    // The Lead takes it as Max's prompt, sent by the routine.
    const prompt = await waitFor(() => rt.db.sessionEvent.findFirst({ where: { sessionId: teamId, messageId: itemId } }), 10_000, "the run's prompt taken");
    expect(prompt.payload).toMatchObject({ kind: "user_message", source: { kind: "human", userId: max.id, name: "Max Routine", routine: { id: created.id, name: "Standup notes" } } });

    await trpc.routines.delete({ teamId, routineId: created.id });
    expect(await asVic.routines.list({ teamId })).toEqual([]);
    expect(await refusal(trpc.routines.runNow({ teamId, routineId: created.id }))).toMatchObject({ code: "ROUTINE_NOT_FOUND" });
    const audit = await trpc.audit.list({ teamId });
    expect(audit.entries.filter((e) => e.kind.startsWith("routine_")).map((e) => [e.kind, e.actorName, (e.detail as { change?: string }).change ?? null])).toEqual([
      ["routine_deleted", "Olive Routine", null],
      ["routine_changed", "Max Routine", "run_now"],
      ["routine_changed", "Max Routine", "resumed"],
      ["routine_changed", "Max Routine", "paused"],
      ["routine_changed", "Max Routine", "edited"],
      ["routine_created", "Olive Routine", null],
    ]);
  });
});
