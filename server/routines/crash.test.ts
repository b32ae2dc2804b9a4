import { describe, expect, it } from "vitest";
import { z } from "zod";
import { asSessionId } from "../ids";
import { createTestPerson } from "../testing/people";
import { childProcessDatabase, spawnRuntime, waitForLine } from "../testing/runtime-child";
import { newTestSession, waitFor } from "../testing/runtime-harness";
import { createRoutine } from "./store";

// A routine under a real crash: a runtime process claims the due routine and is SIGKILLed in the
// window after the claim, before anything of its run is written. Nothing of it committed; the
// next process runs that time once, and the Lead takes the prompt once.

const t = childProcessDatabase();
const CHILD_ENV = { RUNTIME_TEAM: "1", SCRIPTED_MODEL_DELAY_MS: "0", AGENT_LEASE_TTL_MS: "1000", RUNTIME_RECOVERY_INTERVAL_MS: "200" };

describe("a routine across a crash", () => {
  it("runs once after the process that claimed it was killed", { timeout: 120_000 }, async () => {
    const owner = await createTestPerson(t.db, "Olive Crash");
    const lead = asSessionId(await newTestSession(t.db, "Routine crash", owner));
    const r = await createRoutine(t.db, { person: owner, teamId: lead }, { name: "Nightly", prompt: "Check the board", schedule: { kind: "interval", every: 1, unit: "hours" }, missed: "skip", overlap: "skip" });
    // Due a minute ago: not missed.
    await t.db.routine.update({ where: { id: r.id }, data: { nextRunAt: new Date(Date.now() - 60_000) } });

    const first = await spawnRuntime(t, { ...CHILD_ENV, RUNTIME_PAUSE_AFTER_ROUTINE_CLAIM: "1" });
    expect(await waitForLine(first, /^CLAIMED /)).toBe(`CLAIMED ${r.id}`);
    await first.kill("SIGKILL");
    expect(await t.db.routineRun.count({ where: { routineId: r.id } })).toBe(0);
    expect(await t.db.inboxItem.count({ where: { sessionId: lead } })).toBe(0);

    const second = await spawnRuntime(t, CHILD_ENV);
    const prompts = () =>
      t.db.sessionEvent.findMany({ where: { sessionId: lead, kind: "user_message" }, select: { payload: true } }).then((rows) =>
        rows.filter((e) => z.object({ source: z.object({ routine: z.object({ id: z.literal(r.id) }) }) }).safeParse(e.payload).success),
      );
    await waitFor(async () => ((await prompts()).length > 0 ? true : null), 60_000, "the routine's prompt taken");
    await waitFor(async () => ((await t.db.session.findUniqueOrThrow({ where: { id: lead } })).activeTurnId === null ? true : null), 60_000, "the run's turn over");
    await second.kill("SIGTERM");
    expect(await t.db.routineRun.count({ where: { routineId: r.id } })).toBe(1);
    expect(await prompts()).toHaveLength(1);
    expect((await t.db.routine.findUniqueOrThrow({ where: { id: r.id } })).nextRunAt!.getTime()).toBeGreaterThan(Date.now());
  });
});
