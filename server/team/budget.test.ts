import pg from "pg";
import { describe, expect } from "vitest";
import { asSessionId } from "../ids";
import { ACTIVITY_CHANNEL } from "../live/activity";
import { expectFinished, expectStopped, stopWhileTeammatesRun } from "../testing/budget-checks";
import { createTestPerson } from "../testing/people";
import { runtimeTest } from "../testing/fixtures";
import { eventsOf, turnEnds, waitFor } from "../testing/runtime-harness";
import { createSession, promptSession } from "../runtime/sessions";
import { setBudget, stopIfBudgetReached, teamBudget } from "./budget";
import { teamPlaybook } from "./playbook";
import { listMembers } from "./roster";

// Team budgets (SPEC.md §15): the spend is read from the database at every step boundary, so
// a reached budget stops every running member at its next boundary, in whatever process drives
// it; the inboxes stay, nothing runs, and raising the budget resumes each member where it stopped.

const it = runtimeTest({ team: true, playbook: teamPlaybook, delayMs: 15 });

describe("team budgets", () => {
  it("no budget: nothing stops; setting one records who did it; null removes it", async ({ rt }) => {
    const owner = await createTestPerson(rt.db, "Olive");
    const lead = asSessionId((await createSession(rt.db, { title: "Budgeted", model: { provider: "scripted", model: "keyless" }, by: owner })).id);
    expect(await teamBudget(rt.db, lead)).toEqual({ limit: { tokens: null, costNanos: null }, spent: { inputTokens: 0, outputTokens: 0, cachedTokens: 0, costNanos: 0 }, reached: false, stoppedAt: null });
    expect(await rt.db.$transaction((tx) => stopIfBudgetReached(tx, lead))).toBe(false);

    // A budget of one token is reached by the Lead's first step (it spawns the teammates): the
    // next boundary ends its turn, and the teammates' first turns never start.
    const view = await setBudget(rt.db, { person: owner, teamId: lead }, { tokens: 1, costNanos: null });
    expect(view).toMatchObject({ limit: { tokens: 1, costNanos: null }, reached: false });
    await promptSession(rt.db, lead, { text: "hello" });
    await waitFor(async () => turnEnds(await eventsOf(rt.db, lead)).length === 1, 20_000, "the Lead's turn to end");
    expect(turnEnds(await eventsOf(rt.db, lead)).map((t) => t.reason)).toEqual(["budget"]);
    expect((await teamBudget(rt.db, lead)).stoppedAt).not.toBeNull();
    const mates = await rt.db.session.findMany({ where: { teamId: lead, memberName: { not: null } }, select: { id: true } });
    expect(mates).toHaveLength(2);
    for (const m of mates) {
      expect(await rt.db.sessionEvent.count({ where: { sessionId: m.id, kind: "turn_start" } })).toBe(0);
      expect(await rt.db.inboxItem.count({ where: { sessionId: m.id } })).toBe(1);
    }

    const actions = await rt.db.personAction.findMany({ where: { teamId: lead, action: "budget_set" } });
    expect(actions.map((a) => [a.userName, a.detail])).toEqual([["Olive", { tokens: 1, costNanos: null }]]);

    // Removing the budget resumes everything.
    const removed = await setBudget(rt.db, { person: owner, teamId: lead }, { tokens: null, costNanos: null });
    expect(removed).toMatchObject({ reached: false, stoppedAt: null });
    await expectFinished(rt.db, lead);
  });

  it("a cost budget counts the price table's cost, not tokens", async ({ rt, tdb }) => {
    const owner = await createTestPerson(rt.db, "Cass");
    const lead = asSessionId((await createSession(rt.db, { title: "Costed", model: { provider: "scripted", model: "keyless" }, by: owner })).id);
    // Spend as the runtime records it (addSpend): 1,000 tokens costing 0.5 µ$.
    await rt.db.session.update({ where: { id: lead }, data: { spentInputTokens: 800, spentOutputTokens: 200, spentCostNanos: 500 } });
    expect(await setBudget(rt.db, { person: owner, teamId: lead }, { tokens: null, costNanos: 501 })).toMatchObject({ reached: false, spent: { inputTokens: 800, outputTokens: 200, costNanos: 500 } });
    expect(await rt.db.$transaction((tx) => stopIfBudgetReached(tx, lead))).toBe(false);
    await setBudget(rt.db, { person: owner, teamId: lead }, { tokens: 5_000, costNanos: 500 });
    // The stop's mark tells the room (a `team` notification, committed with the mark). A
    // listener started now hears no earlier commit's notification (setBudget's).
    const listener = new pg.Client({ connectionString: tdb.url });
    await listener.connect();
    try {
      const told = new Promise<void>((resolve) =>
        listener.on("notification", (n) => {
          const payload = JSON.parse(n.payload ?? "{}") as { s?: string; k?: string };
          if (payload.s === lead && payload.k === "team") resolve();
        }),
      );
      await listener.query(`LISTEN ${ACTIVITY_CHANNEL}`);
      expect(await stopIfBudgetReached(rt.db.sql, lead)).toBe(true);
      await told;
    } finally {
      await listener.end();
    }
    expect((await teamBudget(rt.db, lead)).stoppedAt).not.toBeNull();
    // A raise that is still not above the spend keeps the stop.
    expect(await setBudget(rt.db, { person: owner, teamId: lead }, { tokens: 1_000, costNanos: null })).toMatchObject({ reached: true });
    expect((await teamBudget(rt.db, lead)).stoppedAt).not.toBeNull();
  });

  it("stops every running member at its next step boundary, then resumes each where it stopped", { timeout: 180_000 }, async ({ rt }) => {
    const owner = await createTestPerson(rt.db, "Bea");
    const lead = asSessionId((await createSession(rt.db, { title: "Team under budget", model: { provider: "scripted", model: "keyless" }, by: owner })).id);
    await promptSession(rt.db, lead, { text: "Build a tiny todo app" });
    await stopWhileTeammatesRun(rt.db, lead, { person: owner, teamId: lead });
    await expectStopped(rt.db, lead, 2);
    const members = await listMembers(rt.db, lead);
    expect(members.map((m) => m.status)).toEqual(["idle", "idle", "idle"]);

    await setBudget(rt.db, { person: owner, teamId: lead }, { tokens: null, costNanos: null });
    await expectFinished(rt.db, lead);
  });
});
