import { describe, expect, it } from "vitest";
import { asSessionId } from "../ids";
import { promptSession } from "../runtime/sessions";
import { createTeam } from "./person-actions";
import { expectFinished, expectStopped, stopWhileTeammatesRun } from "../testing/budget-checks";
import { createTestPerson } from "../testing/people";
import { childProcessDatabase, spawnRuntime } from "../testing/runtime-child";
import { setBudget } from "./budget";

// A team budget is enforced from the database, not from one process's memory: with the Lead
// driven by one runtime process and the teammates by another, a reached budget stops them all,
// and the raise resumes them all.

const t = childProcessDatabase();

describe("team budgets across processes", () => {
  const env = { RUNTIME_TEAM: "1", AGENT_LEASE_TTL_MS: "2000", RUNTIME_RECOVERY_INTERVAL_MS: "200", SCRIPTED_MODEL_DELAY_MS: "15" };

  // Lowered from a budget (every step reserved its most: the spend stays within it) and set on
  // a team that had none (the steps in flight reserved nothing: they finish uncapped, and no
  // other step starts).
  for (const before of [1_000_000, null]) {
    it(`members driven by two processes all stop, and all resume (budget before: ${before ?? "none"})`, { timeout: 240_000 }, async () => {
      const leads = await spawnRuntime(t, { ...env, RUNTIME_DRIVE: "leads" });
      const teammates = await spawnRuntime(t, { ...env, RUNTIME_DRIVE: "teammates" });
      const owner = await createTestPerson(t.db, `Pat ${before ?? "none"}`);
      const lead = asSessionId((await createTeam(t.db, { title: "Two processes", model: { provider: "scripted", model: "keyless" }, by: owner })).id);
      if (before !== null) await setBudget(t.db, { person: owner, teamId: lead }, { tokens: before, costNanos: null });
      await promptSession(t.db, lead, { text: "Build a tiny todo app" });
      const lowered = await stopWhileTeammatesRun(t.db, lead, { person: owner, teamId: lead });
      // The teammates run in one process, the Lead in the other.
      const owners = await t.db.session.findMany({ where: { teamId: lead }, select: { memberName: true, leaseOwner: true } });
      for (const s of owners) expect(s.leaseOwner).toBe(s.memberName === null ? leads.ownerId : teammates.ownerId);
      await expectStopped(t.db, lead, 2, lowered);
      if (before !== null) expect(lowered.uncapped).toEqual([]);

      await setBudget(t.db, { person: owner, teamId: lead }, { tokens: null, costNanos: null });
      await expectFinished(t.db, lead);
      await Promise.all([leads.kill("SIGTERM"), teammates.kill("SIGTERM")]);
    });
  }
});
