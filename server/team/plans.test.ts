import { describe, expect } from "vitest";
import { isAppError } from "../errors";
import { newSessionId } from "../ids";
import { listNotifications } from "../people/notifications";
import { runtimeTest } from "../testing/fixtures";
import { createTestPerson } from "../testing/people";
import { newTestSession, waitFor } from "../testing/runtime-harness";
import { leadOf, type Membership } from "../members/membership";
import { decidePlan, pendingPlans, setPlanApproval } from "./plans";
import { createTask, listTasks, updateTask } from "./task-board";

// Plan approval (SPEC.md §17): with the setting on, the tasks the Lead creates wait as a plan;
// nobody starts them until a person approves it; "revise" sends the note to the Lead, and the
// Lead's changes form the next plan. A person's own tasks never wait.

const it = runtimeTest({ team: true });

async function teamWithMate(rt: { db: Parameters<typeof newTestSession>[0] }, title: string) {
  const owner = await createTestPerson(rt.db, `Olive ${title}`);
  const member = await createTestPerson(rt.db, `Max ${title}`);
  const lead = await newTestSession(rt.db, title, owner);
  await rt.db.teamPerson.create({ data: { teamId: lead, userId: member.id, role: "member" } });
  const sessionId = newSessionId();
  await rt.db.session.create({ data: { id: sessionId, teamId: lead, memberName: "mate", title: "mate", model: { provider: "scripted", model: "keyless" } } });
  await rt.db.teamMember.create({ data: { teamId: lead, name: "mate", sessionId, description: "d", context: "fresh", phase: "active" } });
  const mate: Membership = { teamId: lead, sessionId, name: "mate", isLead: false };
  return { lead, owner, member, mate, by: { person: owner, teamId: lead }, byMember: { person: member, teamId: lead } };
}


describe("plan approval", () => {
  it("the Lead's tasks wait as one plan; revised, the note reaches the Lead; approved, they may start", async ({ rt }) => {
    // Nothing drives the agents here: the Lead's inbox keeps what it is told.
    await rt.runtime.stop();
    const { lead, member, mate, by, byMember } = await teamWithMate(rt, "Planned");
    await setPlanApproval(rt.db, by, true);
    const first = await createTask(rt.db, leadOf(lead), { subject: "Research the options", description: "" });
    const second = await createTask(rt.db, leadOf(lead), { subject: "Build it", description: "", blockedBy: [first.id] });
    // A person's own task is theirs to start: no plan.
    await createTask(rt.db, leadOf(lead), { subject: "Fix the typo", description: "" }, undefined, by);
    const [plan] = await pendingPlans(rt.db, lead);
    expect(plan!.tasks).toEqual([
      { id: "task-1", subject: "Research the options", revision: 1 },
      { id: "task-2", subject: "Build it", revision: 1 },
    ]);
    expect(await pendingPlans(rt.db, lead)).toHaveLength(1);

    // Nobody starts a task of the waiting plan; the refusal says why.
    const refused = await updateTask(rt.db, mate, { taskId: first.id, expectedRevision: 1, action: "claim" }).catch((e: unknown) => e);
    expect(isAppError(refused, "TEAM_TASK_PLAN_PENDING") && refused.message).toContain("waiting for a person's approval");
    expect(isAppError(await updateTask(rt.db, leadOf(lead), { taskId: first.id, expectedRevision: 1, action: "reassign", owner: "mate" }).catch((e: unknown) => e), "TEAM_TASK_PLAN_PENDING")).toBe(true);
    // The person's own task starts at once.
    await updateTask(rt.db, mate, { taskId: "task-3", expectedRevision: 1, action: "claim" });

    // The members are told a plan waits.
    await waitFor(async () => (await listNotifications(rt.db.sql, member.id)).items.find((n) => n.kind === "plan.proposed") ?? null, 20_000, "the plan's notification");

    // Sent back: the Lead reads the note; the tasks stay held.
    await decidePlan(rt.db, byMember, plan!.id, { approve: false, note: "Split the research in two" });
    const told = await rt.db.inboxItem.findMany({ where: { sessionId: lead }, select: { text: true, mode: true } });
    expect(told).toEqual([{ mode: "steer", text: expect.stringContaining("asks you to revise your plan (task-1, task-2) before anyone starts it: Split the research in two") }]);
    expect(isAppError(await updateTask(rt.db, mate, { taskId: first.id, expectedRevision: 1, action: "claim" }).catch((e: unknown) => e), "TEAM_TASK_PLAN_PENDING")).toBe(true);
    // A second decision on it is refused and names the first.
    const late = await decidePlan(rt.db, by, plan!.id, { approve: true, note: null }).catch((e: unknown) => e);
    expect(isAppError(late, "APPROVAL_NOT_PENDING") && late.message).toBe(`Already revised by ${member.name}`);

    // The Lead's edit moves the task into its next plan, with a new task; approved, they start.
    await updateTask(rt.db, leadOf(lead), { taskId: first.id, expectedRevision: 1, action: "edit", subject: "Research option A" });
    await createTask(rt.db, leadOf(lead), { subject: "Research option B", description: "" });
    const [next] = await pendingPlans(rt.db, lead);
    expect(next!.id).not.toBe(plan!.id);
    expect(next!.tasks.map((t) => t.id)).toEqual(["task-1", "task-4"]);
    // A decision on what the person read before the plan changed is refused.
    const stale = await decidePlan(rt.db, by, next!.id, { approve: true, note: null, seen: [{ id: "task-1", revision: 2 }] }).catch((e: unknown) => e);
    expect(isAppError(stale, "PLAN_CHANGED")).toBe(true);
    await decidePlan(rt.db, by, next!.id, { approve: true, note: null, seen: next!.tasks });
    expect(await pendingPlans(rt.db, lead)).toEqual([]);
    const claimed = await updateTask(rt.db, mate, { taskId: first.id, expectedRevision: 2, action: "claim" });
    expect(claimed).toMatchObject({ status: "in_progress", owner: mate.sessionId });
    // The Lead rewriting an approved task that has not started makes it wait again.
    await updateTask(rt.db, leadOf(lead), { taskId: "task-4", expectedRevision: 1, action: "edit", description: "Also compare prices" });
    expect((await pendingPlans(rt.db, lead)).map((p) => p.tasks.map((t) => t.id))).toEqual([["task-4"]]);
    expect(isAppError(await updateTask(rt.db, mate, { taskId: "task-4", expectedRevision: 2, action: "claim" }).catch((e: unknown) => e), "TEAM_TASK_PLAN_PENDING")).toBe(true);
    // task-2 stays in the plan that was sent back until the Lead changes it.
    expect(isAppError(await updateTask(rt.db, leadOf(lead), { taskId: second.id, expectedRevision: 1, action: "reassign", owner: "mate" }).catch((e: unknown) => e), "TEAM_TASK_PLAN_PENDING")).toBe(true);
    expect((await listTasks(rt.db, lead, {})).tasks.map((t) => t.id)).toEqual(["task-1", "task-2", "task-3", "task-4"]);
  });
});
