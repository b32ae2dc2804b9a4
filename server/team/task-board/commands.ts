import { asJson, inTx, type DbOrTx } from "../../db/client";
import { AppError } from "../../errors";
import { DEFAULT_TEAM_LIMITS, type TeamLimits } from "../../../shared/limits";
import { notifyActivity } from "../../db/notify";
import { recordMentions } from "../mentions";
import { needsNewPlan, planForLeadTask } from "../plans";
import { recordAction, type HumanActor } from "../../people/actions";
import { assertMembership, lockTeam, type Membership } from "../../members/membership";
import { decide } from "./actions";
import { checkDependenciesExist } from "./dependencies";
import {
  checkDependencyList,
  checkDescription,
  checkSubject,
  checkWriteScopes,
  parseInput,
  prepareChange,
  requireTaskNumber,
  taskNotFound,
} from "./input";
import {
  CreateTaskInputSchema,
  UpdateTaskInputSchema,
  type ChangedBy,
  type CreateTaskInput,
  type TaskView,
  type UpdateTaskInput,
} from "./schema";
import { toView } from "./views";
import { formatTaskId } from "../../task-ids";

// Mutations. Each runs in one transaction that first locks the team row (lockTeam), which
// serialises every board change of a team: the revision compare-and-set, the live-task
// limit, the id counter and the DAG check cannot race. Check order for an update: unknown
// task → TEAM_TASK_NOT_FOUND; deleted → TEAM_TASK_DELETED (terminal, re-reading would not
// help); revision mismatch → TEAM_TASK_STALE_REVISION; then the action's authority and
// precondition (actions.ts).

/** Any member adds a pending task at revision 1 with the next never-used id. */
export async function createTask(
  db: DbOrTx,
  actor: Membership,
  input: CreateTaskInput,
  limits: Pick<TeamLimits, "maxTasks"> = DEFAULT_TEAM_LIMITS,
  by?: HumanActor,
): Promise<TaskView> {
  const { teamId } = actor;
  const parsed = parseInput(CreateTaskInputSchema, input);
  const subject = checkSubject(parsed.subject);
  const description = checkDescription(parsed.description);
  const blockedBy = checkDependencyList(parsed.blockedBy ?? []);
  const writeScopes = checkWriteScopes(parsed.writeScopes ?? []);
  const { maxTasks } = limits;

  return inTx(db, async (tx) => {
    const number = await lockTeam(tx, teamId);
    await assertMembership(tx, actor);
    const live = await tx.teamTask.count({ where: { teamId, status: { not: "deleted" } } });
    if (live >= maxTasks) {
      throw new AppError(
        "TEAM_TASK_LIMIT",
        `The board already holds ${live} live tasks (at most ${maxTasks}); complete-and-delete or delete tasks first`,
        { live, maxTasks },
      );
    }
    await checkDependenciesExist(tx, teamId, blockedBy);
    await tx.team.update({ where: { id: teamId }, data: { nextTaskNumber: number + 1 } });
    // The Lead's own tasks wait as a plan when the team asks for it (a person's do not).
    const planId = actor.isLead && !by ? await planForLeadTask(tx, teamId) : null;
    const row = await tx.teamTask.create({
      data: {
        teamId,
        number,
        revision: 1,
        subject,
        description,
        status: "pending",
        ownerSessionId: null,
        blockedBy: blockedBy.map(formatTaskId),
        writeScopes,
        createdBy: actor.name,
        changedBy: asJson(changedBy(actor, by)),
        planId,
      },
    });
    if (by) await recordAction(tx, by, "task_changed", { detail: { taskId: formatTaskId(number), action: "create" } });
    await mentionsIn(tx, actor, by, row);
    await notifyActivity(tx, teamId, "board");
    return toView(tx, teamId, row);
  });
}

/**
 * One action on one task, compare-and-set on `expectedRevision`. Success bumps the revision
 * by exactly one and refreshes updated_at.
 */
/** Whether a change rewrites the task's text. */
function rewritesText(data: { subject?: unknown; description?: unknown }, task: { subject: string; description: string }): boolean {
  return (data.subject !== undefined && data.subject !== task.subject) || (data.description !== undefined && data.description !== task.description);
}

/** The people a task's text mentions are told, once per revision. */
async function mentionsIn(tx: DbOrTx, actor: Membership, by: HumanActor | undefined, row: { number: number; revision: number; subject: string; description: string }) {
  const taskId = formatTaskId(row.number);
  await recordMentions(tx, actor.teamId, `${row.subject}\n${row.description}`, {
    by: by ? { name: by.person.name, userId: by.person.id } : { name: actor.name, userId: null },
    where: `Task ${taskId}`,
    key: `mention:task:${actor.teamId}:${taskId}:${row.revision}`,
  });
}

/** A person in the room acts with the Lead's authority, but the board names the person. */
function changedBy(actor: Membership, by: HumanActor | undefined): ChangedBy {
  return by ? { kind: "person", id: by.person.id, name: by.person.name } : { kind: "member", name: actor.name };
}

export async function updateTask(db: DbOrTx, actor: Membership, input: UpdateTaskInput, by?: HumanActor): Promise<TaskView> {
  const { teamId } = actor;
  const parsed = parseInput(UpdateTaskInputSchema, input);
  const number = requireTaskNumber(parsed.taskId);
  const change = prepareChange(parsed);
  const taskId = formatTaskId(number);

  return inTx(db, async (tx) => {
    await lockTeam(tx, teamId);
    await assertMembership(tx, actor);
    const task = await tx.teamTask.findUnique({ where: { teamId_number: { teamId, number } } });
    if (!task) throw taskNotFound(parsed.taskId);
    if (task.status === "deleted") {
      throw new AppError("TEAM_TASK_DELETED", `${taskId} is deleted; its tombstone cannot change`, {
        taskId,
        currentRevision: task.revision,
      });
    }
    if (task.revision !== parsed.expectedRevision) {
      throw new AppError(
        "TEAM_TASK_STALE_REVISION",
        `${taskId} is at revision ${task.revision}, not ${parsed.expectedRevision}; re-read it and retry`,
        { taskId, currentRevision: task.revision, expectedRevision: parsed.expectedRevision },
      );
    }

    const data = await decide(tx, actor, task, change);
    // The Lead rewriting a task of a plan sent back, or of an approved plan before it started,
    // puts it in the plan it makes now.
    const rewritten = rewritesText(data, task);
    const replanned = actor.isLead && !by && rewritten && (await needsNewPlan(tx, task.planId, task.status)) ? { planId: await planForLeadTask(tx, teamId) } : {};
    const row = await tx.teamTask.update({
      where: { teamId_number: { teamId, number }, revision: task.revision },
      data: { ...data, ...replanned, changedBy: asJson(changedBy(actor, by)), revision: { increment: 1 }, updatedAt: new Date() },
    });
    if (by) await recordAction(tx, by, "task_changed", { detail: { taskId, action: parsed.action } });
    if (row.subject !== task.subject || row.description !== task.description) await mentionsIn(tx, actor, by, row);
    await notifyActivity(tx, teamId, "board");
    return toView(tx, teamId, row);
  });
}
