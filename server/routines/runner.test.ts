import { afterEach, describe, expect } from "vitest";
import { z } from "zod";
import { createDb } from "../db/client";
import type { SessionId } from "../ids";
import type { Person } from "../people/person";
import { databaseTest } from "../testing/fixtures";
import { createTestPerson } from "../testing/people";
import { newTestSession } from "../testing/runtime-harness";
import { runDueRoutine, runnerHooks } from "./runner";
import { createRoutine, routineRuns, type RoutineInput } from "./store";

// Routines run exactly once per scheduled time against a real Postgres: two runners racing for
// one due routine run it once; a runner whose connection dies after claiming commits nothing and
// the time runs once after; missed times follow the routine's policy, overlapping ones too.

const it = databaseTest();
afterEach(() => {
  runnerHooks.afterClaim = undefined;
});

const T0 = new Date("2026-12-08T09:00:00.000Z");
const minutes = (n: number) => new Date(T0.getTime() + n * 60_000);
const hourly: RoutineInput = { name: "Digest", prompt: "Summarise yesterday's work", schedule: { kind: "interval", every: 1, unit: "hours" }, missed: "skip", overlap: "queue" };

async function team(db: Parameters<typeof newTestSession>[0], title: string): Promise<{ lead: SessionId; owner: Person }> {
  const owner = await createTestPerson(db, `Olive ${title}`);
  return { lead: await newTestSession(db, title, owner), owner };
}

const queued = (db: Parameters<typeof newTestSession>[0], lead: SessionId) =>
  db.inboxItem.findMany({ where: { sessionId: lead }, orderBy: { position: "asc" }, select: { text: true, source: true } });

describe("the routine runner", () => {
  it("runs a due time once when two runners race for it", async ({ db, tdb }) => {
    const { lead, owner } = await team(db, "Race");
    const r = await createRoutine(db, { person: owner, teamId: lead }, hourly, minutes(-30));
    const other = createDb(tdb, 2);
    try {
      // The first runner holds its claim until the second has looked for due routines.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let claims = 0;
      runnerHooks.afterClaim = async () => {
        claims += 1;
        if (claims === 1) await held;
      };
      const first = runDueRoutine(db, minutes(1));
      while (claims === 0) await new Promise((resolve) => setImmediate(resolve));
      expect(await runDueRoutine(other, minutes(1))).toBe(false);
      release();
      expect(await first).toBe(true);
      expect(await runDueRoutine(other, minutes(1))).toBe(false);
    } finally {
      await other.$disconnect();
    }
    expect(await queued(db, lead)).toEqual([
      { text: "Summarise yesterday's work", source: { kind: "human", userId: owner.id, name: owner.name, routine: { id: r.id, name: "Digest" } } },
    ]);
    const runs = await routineRuns(db, lead, r.id);
    expect(runs.map((x) => [x.scheduledFor.toISOString(), x.trigger, x.state])).toEqual([[T0.toISOString(), "schedule", "waiting"]]);
    expect((await db.routine.findUniqueOrThrow({ where: { id: r.id } })).nextRunAt).toEqual(minutes(60));
  });

  it("leaves nothing of a claim whose connection died, and runs that time once after", async ({ db, tdb }) => {
    const { lead, owner } = await team(db, "Crash");
    const r = await createRoutine(db, { person: owner, teamId: lead }, hourly, minutes(-30));
    const killer = createDb(tdb, 1);
    try {
      // The claiming connection is ended inside the window: between the claim and any write.
      runnerHooks.afterClaim = async (_id, tx) => {
        runnerHooks.afterClaim = undefined;
        const [me] = z.array(z.object({ pid: z.number() })).parse(await tx.$queryRaw`SELECT pg_backend_pid() AS pid`);
        await killer.sql.$queryRaw`SELECT pg_terminate_backend(${me!.pid})`;
      };
      await expect(runDueRoutine(db, minutes(1))).rejects.toThrow();
      expect(await queued(db, lead)).toEqual([]);
      expect(await db.routineRun.count({ where: { routineId: r.id } })).toBe(0);
      expect(await runDueRoutine(killer, minutes(1))).toBe(true);
      expect(await runDueRoutine(db, minutes(2))).toBe(false);
    } finally {
      await killer.$disconnect();
    }
    expect(await queued(db, lead)).toHaveLength(1);
    expect(await db.routineRun.count({ where: { routineId: r.id } })).toBe(1);
  });

  it("skips a missed time or runs it once on recovery, as the routine says", async ({ db }) => {
    const skip = await team(db, "Missed skip");
    const once = await team(db, "Missed once");
    const a = await createRoutine(db, { person: skip.owner, teamId: skip.lead }, hourly, minutes(-30));
    const b = await createRoutine(db, { person: once.owner, teamId: once.lead }, { ...hourly, missed: "run_once" }, minutes(-30));
    // Everything was down for five hours: five times passed.
    const back = minutes(5 * 60 + 10);
    while (await runDueRoutine(db, back));
    expect((await routineRuns(db, skip.lead, a.id)).map((x) => [x.state, x.reason])).toEqual([["skipped", "missed"]]);
    expect(await queued(db, skip.lead)).toEqual([]);
    expect((await routineRuns(db, once.lead, b.id)).map((x) => [x.trigger, x.state])).toEqual([["recovery", "waiting"]]);
    expect(await queued(db, once.lead)).toHaveLength(1);
    // Both go on from the next time after now.
    for (const id of [a.id, b.id]) expect((await db.routine.findUniqueOrThrow({ where: { id } })).nextRunAt).toEqual(minutes(6 * 60));
    const notice = await db.teamEvent.findFirst({ where: { teamId: skip.lead, kind: "routine.skipped" } });
    expect(notice?.data).toMatchObject({ routineId: a.id, reason: "missed", ownerId: skip.owner.id });
  });

  it("skips a time while the previous run still works, or queues it behind, as the routine says", async ({ db }) => {
    const skip = await team(db, "Overlap skip");
    const queue = await team(db, "Overlap queue");
    const a = await createRoutine(db, { person: skip.owner, teamId: skip.lead }, { ...hourly, overlap: "skip" }, minutes(-30));
    const b = await createRoutine(db, { person: queue.owner, teamId: queue.lead }, hourly, minutes(-30));
    await runDueRoutine(db, minutes(1));
    await runDueRoutine(db, minutes(1));
    // An hour later the first prompt is still waiting in each Lead's inbox (nothing drives them here).
    while (await runDueRoutine(db, minutes(61)));
    expect((await routineRuns(db, skip.lead, a.id)).map((x) => [x.state, x.reason])).toEqual([["skipped", "overlap"], ["waiting", null]]);
    expect(await queued(db, skip.lead)).toHaveLength(1);
    expect((await routineRuns(db, queue.lead, b.id)).map((x) => x.state)).toEqual(["waiting", "waiting"]);
    expect(await queued(db, queue.lead)).toHaveLength(2);
  });

  it("pauses a routine whose owner can no longer prompt the team", async ({ db }) => {
    const { lead } = await team(db, "Owner left");
    const member = await createTestPerson(db, "Max Owner left");
    await db.teamPerson.create({ data: { teamId: lead, userId: member.id, role: "member" } });
    const r = await createRoutine(db, { person: member, teamId: lead }, hourly, minutes(-30));
    await db.teamPerson.update({ where: { teamId_userId: { teamId: lead, userId: member.id } }, data: { role: "viewer" } });
    expect(await runDueRoutine(db, minutes(1))).toBe(true);
    expect((await routineRuns(db, lead, r.id)).map((x) => [x.state, x.reason])).toEqual([["skipped", "owner_left"]]);
    expect(await db.routine.findUniqueOrThrow({ where: { id: r.id } })).toMatchObject({ paused: true, nextRunAt: null });
    expect(await queued(db, lead)).toEqual([]);
  });
});
