import { z } from "zod";
import { inTx, type Db, type Tx } from "../db/client";
import { AppError } from "../errors";
import { newPlanId, type SessionId } from "../ids";
import { notifyActivity } from "../db/notify";
import { recordAction, type HumanActor } from "../people/actions";
import { PersonRefSchema } from "../person-ref";
import { enqueue } from "../runtime/inbox";
import { recordTeamEvent } from "../runtime/team-events";
import { lockTeam } from "../members/membership";
import { formatTaskId } from "../task-ids";

// Plan approval (SPEC.md §17), a team setting: the tasks the Lead creates in one turn form a
// plan that waits for a person. Its tasks cannot be claimed or assigned (TEAM_TASK_PLAN_PENDING,
// which the model reads) until a member or owner approves it; "revise" sends the person's note
// to the Lead, whose changed or new tasks then form the next plan. The first decision wins.

export const PlanViewSchema = z.object({
  id: z.string(),
  createdAt: z.date(),
  tasks: z.array(z.object({ id: z.string(), subject: z.string(), revision: z.number().int() })),
});
export type PlanView = z.infer<typeof PlanViewSchema>;

const PlanRows = z.array(z.object({ id: z.string(), status: z.enum(["pending", "approved", "revised"]) }));
const SettingRows = z.array(z.object({ plan_approval: z.boolean(), turn_id: z.string().nullable() }));

/**
 * In a task's creation (or the Lead's edit of a task a revision sent back): the plan the task
 * joins, or null when the team does not ask for plans or a person made it. One plan per Lead
 * turn while it waits; the first task of a plan tells the team's people.
 */
export async function planForLeadTask(tx: Tx, teamId: SessionId): Promise<string | null> {
  const [setting] = SettingRows.parse(
    await tx.$queryRaw`SELECT t.plan_approval, s.active_turn_id AS turn_id FROM teams t JOIN sessions s ON s.id = t.id WHERE t.id = ${teamId}`,
  );
  if (!setting?.plan_approval) return null;
  const turnId = setting.turn_id ?? "no-turn";
  const [open] = PlanRows.parse(await tx.$queryRaw`SELECT id, status FROM plans WHERE team_id = ${teamId} AND turn_id = ${turnId} AND status = 'pending'`);
  if (open) return open.id;
  const id = newPlanId();
  await tx.$executeRaw`INSERT INTO plans (id, team_id, turn_id) VALUES (${id}, ${teamId}, ${turnId})`;
  await recordTeamEvent(tx, teamId, `plan:${id}`, { kind: "plan.proposed", planId: id });
  return id;
}

/** Why a task of a plan may not start yet, or null when it may (no plan, or an approved one). */
export async function planHold(tx: Tx, teamId: SessionId, planId: string | null, taskId: string): Promise<AppError | null> {
  if (planId === null) return null;
  const [plan] = PlanRows.parse(await tx.$queryRaw`SELECT id, status FROM plans WHERE id = ${planId} AND team_id = ${teamId}`);
  if (!plan || plan.status === "approved") return null;
  return new AppError(
    "TEAM_TASK_PLAN_PENDING",
    plan.status === "pending"
      ? `${taskId} is part of a plan waiting for a person's approval; nobody may start it until then (the Lead is told when it is decided)`
      : `${taskId} is part of a plan a person sent back for revision; the Lead changes it first`,
    { taskId, planId, planStatus: plan.status },
  );
}

/**
 * Whether the Lead's change to a task's text puts it in the plan being made now: its plan was
 * sent back, or approved while the task has not started (what was approved is not what it says).
 */
export async function needsNewPlan(tx: Tx, planId: string | null, taskStatus: string): Promise<boolean> {
  if (planId === null) return false;
  const status = PlanRows.parse(await tx.$queryRaw`SELECT id, status FROM plans WHERE id = ${planId}`)[0]?.status;
  return status === "revised" || (status === "approved" && taskStatus === "pending");
}

/** The team's plans waiting for a decision, each with its live tasks. */
export async function pendingPlans(db: Db | Tx, teamId: SessionId): Promise<PlanView[]> {
  const plans = await db.plan.findMany({ where: { teamId, status: "pending" }, orderBy: { createdAt: "asc" } });
  if (plans.length === 0) return [];
  const tasks = await db.teamTask.findMany({
    where: { teamId, planId: { in: plans.map((p) => p.id) }, status: { not: "deleted" } },
    orderBy: { number: "asc" },
    select: { number: true, subject: true, revision: true, planId: true },
  });
  return plans.map((p) => ({
    id: p.id,
    createdAt: p.createdAt,
    tasks: tasks.filter((t) => t.planId === p.id).map((t) => ({ id: formatTaskId(t.number), subject: t.subject, revision: t.revision })),
  }));
}

const Decided = z.array(z.object({ status: z.string(), decided_by: PersonRefSchema.nullable() }));

/**
 * A member or owner approves a pending plan, or sends it back with a note; the Lead is told
 * either way. `seen`: the tasks (and revisions) the person decided on; a plan that changed
 * since is refused (PLAN_CHANGED), so nothing is approved unread. The team row lock orders the
 * decision against board changes (a task joining the plan, an edit).
 */
export async function decidePlan(
  db: Db,
  by: HumanActor,
  planId: string,
  d: { approve: boolean; note: string | null; seen?: readonly { id: string; revision: number }[] },
): Promise<void> {
  await inTx(db, async (tx) => {
    await lockTeam(tx, by.teamId);
    const [row] = Decided.parse(await tx.$queryRaw`SELECT status, decided_by FROM plans WHERE id = ${planId} AND team_id = ${by.teamId} FOR UPDATE`);
    if (!row) throw new AppError("PLAN_NOT_FOUND", "No such plan in this team", { planId });
    if (row.status !== "pending") {
      throw new AppError("APPROVAL_NOT_PENDING", `Already ${row.status}${row.decided_by ? ` by ${row.decided_by.name}` : ""}`, { planId, status: row.status });
    }
    if (d.seen) {
      const now = (await pendingPlans(tx, by.teamId)).find((p) => p.id === planId)?.tasks ?? [];
      const key = (ts: readonly { id: string; revision: number }[]) => ts.map((t) => `${t.id}@${t.revision}`).sort().join(",");
      if (key(now) !== key(d.seen)) throw new AppError("PLAN_CHANGED", "The plan changed since you read it: read it again before deciding", { planId });
    }
    const status = d.approve ? "approved" : "revised";
    await tx.$executeRaw`UPDATE plans SET status = ${status}, decided_by = ${JSON.stringify({ id: by.person.id, name: by.person.name })}::jsonb,
        note = ${d.note}, decided_at = now() WHERE id = ${planId}`;
    const tasks = (await tx.teamTask.findMany({ where: { planId, status: { not: "deleted" } }, orderBy: { number: "asc" }, select: { number: true } })).map((t) =>
      formatTaskId(t.number),
    );
    const list = tasks.join(", ") || "no tasks";
    const text = d.approve
      ? `${by.person.name} approved your plan (${list}): its tasks may be claimed and assigned now.${d.note ? ` Note: ${d.note}` : ""}`
      : `${by.person.name} asks you to revise your plan (${list}) before anyone starts it: ${d.note ?? "no note given"}`;
    await enqueue(tx, by.teamId, { mode: "steer", text, source: { kind: "system" } });
    await recordAction(tx, by, "plan_decided", { detail: { planId, approved: d.approve, tasks } });
    await notifyActivity(tx, by.teamId, "inbox");
    await notifyActivity(tx, by.teamId, "board");
  });
}

/** Owners turn plan approval on or off; plans already waiting stay until decided. */
export async function setPlanApproval(db: Db, by: HumanActor, on: boolean): Promise<void> {
  await inTx(db, async (tx) => {
    await tx.$executeRaw`UPDATE teams SET plan_approval = ${on} WHERE id = ${by.teamId}`;
    await recordAction(tx, by, "tool_policy_set", { detail: { planApproval: on } });
    await notifyActivity(tx, by.teamId, "team");
  });
}

export async function planApprovalOf(db: Db | Tx, teamId: SessionId): Promise<boolean> {
  return (await db.team.findUnique({ where: { id: teamId }, select: { planApproval: true } }))?.planApproval ?? false;
}
