import pg from "pg";
import { describe, expect } from "vitest";
import { type Db, directUrlOf } from "../db/client";
import { asSessionId, newSessionId, type SessionId } from "../ids";
import { FREE } from "../models/catalog";
import { spendTokens } from "../../shared/model-text";
import { ACTIVITY_CHANNEL } from "../db/notify";
import { expectFinished, expectStopped, stopWhileTeammatesRun, teamSessions } from "../testing/budget-checks";
import { createTestPerson } from "../testing/people";
import { runtimeTest } from "../testing/fixtures";
import { waitFor } from "../testing/runtime-harness";
import { promptSession } from "../runtime/sessions";
import { createTeam } from "./person-actions";
import { StepWaitAborted } from "../runtime/step-reserve";
import { reserveStep, setBudget, teamBudget } from "./budget";
import { teamPlaybook } from "./playbook";
import { listMembers } from "./roster";
import { agentStatus } from "../../components/room/agent-status";
import { ScriptedModel } from "../models/scripted";
import { StreamGate } from "../testing/stream-gate";

// Team budgets (SPEC.md §15): the spend is read from the database at every step boundary, so
// a reached budget stops every running member at its next boundary, in whatever process drives
// it; the inboxes stay, nothing runs, and raising the budget resumes each member where it stopped.

const gate = new StreamGate();
const keyless = gate.wrap(new ScriptedModel({ delayMs: 15, playbook: teamPlaybook }));
const it = runtimeTest({ team: true, resolveModel: () => keyless });

const lease = { owner: "budget-test", token: 1 };
const need = (inputTokens: number, outputLimit = 1_024, price = FREE) => () => ({ inputTokens, requestTokens: inputTokens, outputLimit, price });

/** A member row the test holds the lease of, to reserve steps for by hand. */
async function heldMember(db: Db, teamId: SessionId, name: string): Promise<SessionId> {
  const id = newSessionId();
  await db.session.create({
    data: { id, teamId, memberName: name, title: name, model: { provider: "scripted", model: "keyless" }, leaseOwner: lease.owner, leaseToken: lease.token },
  });
  return id;
}

async function reserved(db: Db, teamId: SessionId) {
  return (await db.session.findMany({ where: { teamId }, select: { memberName: true, reservedTokens: true, reservedCostNanos: true }, orderBy: { memberName: "asc" } }))
    .filter((s) => s.reservedTokens > 0n)
    .map((s) => [s.memberName, Number(s.reservedTokens), Number(s.reservedCostNanos)]);
}

describe("team budgets", () => {
  it("no budget: nothing is reserved; a budget too small for a first step starts no turn; removing it resumes", async ({ rt }) => {
    const owner = await createTestPerson(rt.db, "Olive");
    const lead = asSessionId((await createTeam(rt.db, { title: "Budgeted", model: { provider: "scripted", model: "keyless" }, by: owner })).id);
    expect(await teamBudget(rt.db, lead)).toEqual({ limit: { tokens: null, costNanos: null }, spent: { inputTokens: 0, outputTokens: 0, cachedTokens: 0, costNanos: 0 }, reached: false, stoppedAt: null, need: null });
    const free = await heldMember(rt.db, lead, "free");
    expect(await reserveStep(rt.db, free, lease, rt.db.sql, need(1_000_000))).toMatchObject({ maxOutputTokens: null, holds: expect.anything() });
    expect(await reserved(rt.db, lead)).toEqual([]);
    await rt.db.session.delete({ where: { id: free } });

    // 100 tokens cannot hold the Lead's first step (its system prompt alone is more): the turn
    // never starts, the prompt waits in the inbox, and the team is stopped.
    const view = await setBudget(rt.db, { person: owner, teamId: lead }, { tokens: 100, costNanos: null });
    expect(view).toMatchObject({ limit: { tokens: 100, costNanos: null }, reached: false });
    await promptSession(rt.db, lead, { text: "hello" });
    await waitFor(async () => (await teamBudget(rt.db, lead)).stoppedAt !== null, 20_000, "the team to stop");
    expect(await rt.db.sessionEvent.count({ where: { sessionId: lead, kind: "turn_start" } })).toBe(0);
    expect(await rt.db.inboxItem.count({ where: { sessionId: lead } })).toBe(1);
    expect(await teamBudget(rt.db, lead)).toMatchObject({ reached: true, spent: { inputTokens: 0, outputTokens: 0 } });

    const actions = await rt.db.personAction.findMany({ where: { teamId: lead, action: "budget_set" } });
    expect(actions.map((a) => [a.userName, a.detail])).toEqual([["Olive", { tokens: 100, costNanos: null }]]);

    // Removing the budget resumes everything.
    const removed = await setBudget(rt.db, { person: owner, teamId: lead }, { tokens: null, costNanos: null });
    expect(removed).toMatchObject({ reached: false, stoppedAt: null });
    await expectFinished(rt.db, lead);
    expect(await reserved(rt.db, lead)).toEqual([]);
  });

  it("a cost budget binds on the price table's cost: what fits is reserved, what does not stops the team", async ({ rt, tdb }) => {
    const owner = await createTestPerson(rt.db, "Cass");
    const lead = asSessionId((await createTeam(rt.db, { title: "Costed", model: { provider: "scripted", model: "keyless" }, by: owner })).id);
    const [ann, bob] = [await heldMember(rt.db, lead, "ann"), await heldMember(rt.db, lead, "bob")];
    // Spent so far: 1,000 tokens costing 1,000,000 nano-USD. Budget: 3,000,000.
    await rt.db.session.update({ where: { id: lead }, data: { spentInputTokens: 800, spentOutputTokens: 200, spentCostNanos: 1_000_000 } });
    expect(await setBudget(rt.db, { person: owner, teamId: lead }, { tokens: null, costNanos: 3_000_000 })).toMatchObject({ reached: false });
    const price = { input: 1, output: 2 };
    // Ann's step: 500 input tokens (500,000) leave 1,500,000 for 750 of its 1,024 output tokens.
    expect(await reserveStep(rt.db, ann, lease, rt.db.sql, need(500, 1_024, price))).toEqual({ maxOutputTokens: 750 });
    expect(await reserved(rt.db, lead)).toEqual([["ann", 1_250, 2_000_000]]);

    // Bob's step would cross the budget even without Ann's (its input alone costs 2,500,000): it
    // does not start, and the room is told the team stopped (a `team` notification committed
    // with the mark; a listener started now hears no earlier commit's).
    const listener = new pg.Client({ connectionString: directUrlOf(tdb) });
    await listener.connect();
    try {
      const told = new Promise<void>((resolve) =>
        listener.on("notification", (n) => {
          const payload = JSON.parse(n.payload ?? "{}") as { s?: string; k?: string };
          if (payload.s === lead && payload.k === "team") resolve();
        }),
      );
      await listener.query(`LISTEN ${ACTIVITY_CHANNEL}`);
      expect(await reserveStep(rt.db, bob, lease, rt.db.sql, need(2_500, 1_024, price))).toBe("budget");
      await told;
    } finally {
      await listener.end();
    }
    expect(await teamBudget(rt.db, lead)).toMatchObject({ reached: true, stoppedAt: expect.any(Date) });
    expect(await reserved(rt.db, lead)).toEqual([["ann", 1_250, 2_000_000]]);
    // A raise that is still not above the spend keeps the stop.
    expect(await setBudget(rt.db, { person: owner, teamId: lead }, { tokens: null, costNanos: 900_000 })).toMatchObject({ reached: true });
    expect((await teamBudget(rt.db, lead)).stoppedAt).not.toBeNull();
    // A reservation under another lease is refused as a lost lease, and writes nothing.
    await setBudget(rt.db, { person: owner, teamId: lead }, { tokens: null, costNanos: 10_000_000 });
    await expect(reserveStep(rt.db, bob, { ...lease, token: 2 }, rt.db.sql, need(1, 1_024, price))).rejects.toMatchObject({ code: "LEASE_LOST" });
    expect(await reserved(rt.db, lead)).toEqual([["ann", 1_250, 2_000_000]]);
  });

  it("steps reserved at the same moment: as many as fit get room, the others wait for the steps in flight", async ({ rt }) => {
    const owner = await createTestPerson(rt.db, "Dot");
    const lead = asSessionId((await createTeam(rt.db, { title: "Racing", model: { provider: "scripted", model: "keyless" }, by: owner })).id);
    const members = await Promise.all(["m1", "m2", "m3", "m4", "m5", "m6"].map((n) => heldMember(rt.db, lead, n)));
    // 2,000 tokens a step (1,000 in, 1,000 out at most); the budget holds exactly three.
    await setBudget(rt.db, { person: owner, teamId: lead }, { tokens: 6_000, costNanos: null });
    const closing = new AbortController();
    const outcomes: (string | { maxOutputTokens: number | null })[] = [];
    const attempts = members.map((m) =>
      reserveStep(rt.db, m, lease, rt.db.sql, need(1_000, 1_000), closing.signal).then(
        (room) => void outcomes.push(room),
        (e: unknown) => void outcomes.push(e instanceof StepWaitAborted ? "aborted" : String(e)),
      ),
    );
    // The first three to take the team row's lock get their whole limit; the others would fit
    // the spend (nothing yet), so they wait for the steps in flight instead of stopping the team.
    await waitFor(async () => outcomes.length === 3 || null, 20_000, "three reservations");
    expect(outcomes).toEqual([{ maxOutputTokens: 1_000 }, { maxOutputTokens: 1_000 }, { maxOutputTokens: 1_000 }]);
    expect((await reserved(rt.db, lead)).reduce((sum, [, tokens]) => sum + Number(tokens), 0)).toBe(6_000);

    // Their replies are recorded (1,200 tokens each) and release the rest: room for one more
    // whole step (2,400 left); the last two still wait, and end when their drivers close.
    await rt.db.session.updateMany({ where: { teamId: lead, reservedTokens: { gt: 0 } }, data: { reservedTokens: 0, reservedCostNanos: 0, spentOutputTokens: 1_200 } });
    await waitFor(async () => outcomes.length === 4 || null, 20_000, "a fourth reservation");
    expect(outcomes[3]).toEqual({ maxOutputTokens: 1_000 });
    closing.abort();
    await Promise.all(attempts);
    expect(outcomes.slice(4)).toEqual(["aborted", "aborted"]);
    expect((await teamBudget(rt.db, lead)).stoppedAt).toBeNull();
  });

  it("a keyless team binds to its budget: it stops before crossing it, and finishes after a raise", { timeout: 180_000 }, async ({ rt }) => {
    const owner = await createTestPerson(rt.db, "Eve");
    const lead = asSessionId((await createTeam(rt.db, { title: "Bound", model: { provider: "scripted", model: "keyless" }, by: owner })).id);
    await setBudget(rt.db, { person: owner, teamId: lead }, { tokens: 8_000, costNanos: null });
    await promptSession(rt.db, lead, { text: "Build a tiny todo app" });
    await waitFor(async () => (await teamBudget(rt.db, lead)).stoppedAt !== null, 60_000, "the team to stop at its budget");
    await waitFor(async () => (await teamSessions(rt.db, lead)).every((s) => s.activeTurnId === null), 60_000, "every member stopped");
    const { spent } = await teamBudget(rt.db, lead);
    // Work happened, and none of it crossed the budget.
    expect(spendTokens(spent)).toBeGreaterThan(0);
    expect(spendTokens(spent)).toBeLessThanOrEqual(8_000);
    expect(await reserved(rt.db, lead)).toEqual([]);

    await setBudget(rt.db, { person: owner, teamId: lead }, { tokens: null, costNanos: null });
    await expectFinished(rt.db, lead);
  });

  it("stops every running member at its next step boundary, then resumes each where it stopped", { timeout: 180_000 }, async ({ rt }) => {
    const owner = await createTestPerson(rt.db, "Bea");
    const lead = asSessionId((await createTeam(rt.db, { title: "Team under budget", model: { provider: "scripted", model: "keyless" }, by: owner })).id);
    // A budget from the start: every step reserves its most, so the lowering below binds.
    await setBudget(rt.db, { person: owner, teamId: lead }, { tokens: 1_000_000, costNanos: null });
    await promptSession(rt.db, lead, { text: "Build a tiny todo app" });
    const lowered = await stopWhileTeammatesRun(rt.db, lead, { person: owner, teamId: lead });
    await expectStopped(rt.db, lead, 2, lowered);
    const members = await listMembers(rt.db, lead);
    expect(members.map((m) => m.status)).toEqual(["idle", "idle", "idle"]);

    await setBudget(rt.db, { person: owner, teamId: lead }, { tokens: null, costNanos: null });
    await expectFinished(rt.db, lead);
  });
  it("a budget set before the prompt is passed by at most 10 %; the stopped team says what a step needs and what is left", { timeout: 180_000 }, async ({ rt }) => {
    const owner = await createTestPerson(rt.db, "Pia");
    const lead = asSessionId((await createTeam(rt.db, { title: "Preset", model: { provider: "scripted", model: "keyless" }, by: owner })).id);
    const limit = 12_000;
    await setBudget(rt.db, { person: owner, teamId: lead }, { tokens: limit, costNanos: null });
    await promptSession(rt.db, lead, { text: "Build a tiny todo app" });
    await waitFor(async () => (await teamBudget(rt.db, lead)).stoppedAt !== null, 60_000, "the team to stop at its budget");
    await waitFor(async () => (await teamSessions(rt.db, lead)).every((s) => s.activeTurnId === null), 60_000, "every member stopped");
    const budget = await teamBudget(rt.db, lead);
    expect(spendTokens(budget.spent)).toBeGreaterThan(0);
    expect(spendTokens(budget.spent)).toBeLessThanOrEqual(limit * 1.1);
    // Why: the step that did not fit needed more than was left.
    expect(budget.need!.tokens).toBeGreaterThan(limit - spendTokens(budget.spent));
    // Every member shows as paused, and the person who prompted is told with the figures.
    await waitFor(
      async () => (await listMembers(rt.db, lead)).every((m) => agentStatus(m, { budgetReached: budget.reached }) === "Paused (budget)") || null,
      20_000,
      "every member paused",
    );
    const told = await waitFor(async () => rt.db.notification.findFirst({ where: { userId: owner.id, teamId: lead, kind: "budget.reached" } }), 20_000, "the notification");
    expect(told.body).toMatch(/^The next step needs about [\d,]+ tokens; [\d,]+ tokens left\. /);

    await setBudget(rt.db, { person: owner, teamId: lead }, { tokens: null, costNanos: null });
    expect((await teamBudget(rt.db, lead)).need).toBeNull();
    await expectFinished(rt.db, lead);
  });

  it("a budget set while three members stream binds within 10 %: their steps finish, no other starts", { timeout: 180_000 }, async ({ rt }) => {
    const owner = await createTestPerson(rt.db, "Lou");
    const lead = asSessionId((await createTeam(rt.db, { title: "Lowered", model: { provider: "scripted", model: "keyless" }, by: owner })).id);
    // No budget: nothing is reserved; each step's request is on the spend once its provider answers.
    await promptSession(rt.db, lead, { text: "Build a tiny todo app" });
    await waitFor(async () => (await teamSessions(rt.db, lead)).length === 3 || null, 60_000, "both teammates");
    gate.arm();
    try {
      await waitFor(async () => gate.held === 3 || null, 60_000, "three members streaming");
      const { spent } = await teamBudget(rt.db, lead);
      const limit = spendTokens(spent) + 400;
      await setBudget(rt.db, { person: owner, teamId: lead }, { tokens: limit, costNanos: null });
      gate.open();
      await waitFor(async () => (await teamBudget(rt.db, lead)).stoppedAt !== null, 60_000, "the team to stop");
      await waitFor(async () => (await teamSessions(rt.db, lead)).every((s) => s.activeTurnId === null), 60_000, "every member stopped");
      const final = spendTokens((await teamBudget(rt.db, lead)).spent);
      expect(final).toBeLessThanOrEqual(limit * 1.1);
      // The three replies in flight were the only spend after the lowering.
      const after = await rt.db.$queryRaw<{ n: bigint }[]>`SELECT count(*)::bigint AS n FROM session_events e JOIN sessions s ON s.id = e.session_id
        WHERE s.team_id = ${lead} AND e.kind = 'step_start' AND e.created_at > (SELECT max(created_at) FROM person_actions WHERE team_id = ${lead} AND action = 'budget_set')`;
      expect(Number(after[0]!.n)).toBe(0);
    } finally {
      gate.open();
    }
    await setBudget(rt.db, { person: owner, teamId: lead }, { tokens: null, costNanos: null });
    await expectFinished(rt.db, lead);
  });
});
