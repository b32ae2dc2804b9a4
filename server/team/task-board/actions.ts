import type { Tx } from "../../db/client";
import type { Prisma, TeamTask } from "../../db/generated/client";
import { AppError } from "../../errors";
import { resolveActiveMember, type Membership } from "../../members/membership";
import { planHold } from "../plans";
import { checkAcyclic, checkDependenciesExist } from "./dependencies";
import type { Change } from "./input";

import { ownerNameOf } from "./views";
import { formatTaskId, taskNumbers } from "../../task-ids";

// The per-action policy (docs/SPEC.md §8): who may do what, and when, against the current
// (locked) task. Authority is exactly SPEC.md's table: the task's creator has no special
// rights. Choices where SPEC.md is silent:
// - `claim` of a task already in progress and owned by the caller is
//   TEAM_TASK_INVALID_TRANSITION (no silent no-op: every success bumps the revision).
// - `complete` keeps the owner (the view shows who did it); `release` / `reopen` clear it;
//   `delete` keeps the tombstone as it was apart from the status.
// - `reassign`: the target must be `lead` or an active member; "ready" for an in-progress
//   task means all its blockers are completed. A blank owner unassigns: the task goes back to
//   pending with no owner.
// - `set_dependencies` and `edit` are allowed in any non-deleted status.

type TaskPatch = Pick<Prisma.TeamTaskUpdateInput, "status" | "ownerSessionId" | "subject" | "description" | "blockedBy" | "writeScopes">;

/** Authority and precondition of one action against the current (locked) task; the patch to write. */
export async function decide(tx: Tx, actor: Membership, task: TeamTask, change: Change): Promise<TaskPatch> {
  const { teamId } = actor;
  const taskId = formatTaskId(task.number);
  const { action } = change;
  const transition = (why: string) =>
    new AppError("TEAM_TASK_INVALID_TRANSITION", `Cannot ${action} ${taskId}: ${why}`, {
      taskId,
      action,
      status: task.status,
    });
  const requireOwnerOrLead = async () => {
    if (actor.isLead || (task.ownerSessionId !== null && task.ownerSessionId === actor.sessionId)) return;
    const ownerName = await ownerNameOf(tx, teamId, task.ownerSessionId);
    throw new AppError(
      "TEAM_TASK_UNAUTHORIZED",
      `${actor.name} may not ${action} ${taskId}: only its owner (${ownerName ?? "none"}) or the lead may`,
      { taskId, action, ownerName },
    );
  };
  const unfinishedBlockers = async () => {
    const numbers = taskNumbers(task.blockedBy);
    if (numbers.length === 0) return [];
    const rows = await tx.teamTask.findMany({
      where: { teamId, number: { in: numbers } },
      select: { number: true, status: true },
    });
    const done = new Set(rows.filter((r) => r.status === "completed").map((r) => formatTaskId(r.number)));
    return task.blockedBy.filter((id) => !done.has(id));
  };
  const blocked = (waitingFor: string[]) =>
    new AppError("TEAM_TASK_BLOCKED", `${taskId} is not ready: it waits for ${waitingFor.join(", ")} to complete`, {
      taskId,
      waitingFor,
    });

  switch (change.action) {
    case "claim": {
      if (task.status === "completed") throw transition("it is completed (reopen it first)");
      const mine = task.ownerSessionId === actor.sessionId;
      if (task.ownerSessionId !== null && !mine) {
        const ownerName = await ownerNameOf(tx, teamId, task.ownerSessionId);
        throw new AppError("TEAM_TASK_ALREADY_CLAIMED", `${taskId} is already claimed by ${ownerName ?? "another member"}`, {
          taskId,
          ownerName,
        });
      }
      if (task.status === "in_progress") throw transition("you already own it and it is in progress");
      const held = await planHold(tx, teamId, task.planId, taskId);
      if (held) throw held;
      const waitingFor = await unfinishedBlockers();
      if (waitingFor.length > 0) throw blocked(waitingFor);
      return { status: "in_progress", ownerSessionId: actor.sessionId };
    }
    case "release":
      await requireOwnerOrLead();
      if (task.status !== "in_progress") throw transition(`it is ${task.status}, not in_progress`);
      return { status: "pending", ownerSessionId: null };
    case "edit":
      await requireOwnerOrLead();
      return {
        ...(change.subject !== undefined && { subject: change.subject }),
        ...(change.description !== undefined && { description: change.description }),
        ...(change.writeScopes !== undefined && { writeScopes: change.writeScopes }),
      };
    case "set_dependencies":
      await requireOwnerOrLead();
      await checkDependenciesExist(tx, teamId, change.blockedBy);
      await checkAcyclic(tx, teamId, task.number, change.blockedBy);
      return { blockedBy: change.blockedBy.map(formatTaskId) };
    case "complete":
      await requireOwnerOrLead();
      if (task.status !== "in_progress") throw transition(`it is ${task.status}, not in_progress`);
      return { status: "completed" };
    case "reopen":
      await requireOwnerOrLead();
      if (task.status !== "completed") throw transition(`it is ${task.status}, not completed`);
      return { status: "pending", ownerSessionId: null };
    case "reassign": {
      if (!actor.isLead) {
        throw new AppError("TEAM_TASK_UNAUTHORIZED", `${actor.name} may not reassign ${taskId}: only the lead may`, {
          taskId,
          action,
        });
      }
      if (task.status !== "pending" && task.status !== "in_progress") {
        throw transition(`it is ${task.status}; only pending or in-progress tasks can be reassigned`);
      }
      if (change.owner === null) return { status: "pending", ownerSessionId: null };
      const held = await planHold(tx, teamId, task.planId, taskId);
      if (held) throw held;
      const { sessionId: ownerSessionId } = await resolveActiveMember(tx, actor.teamId, change.owner, "task");
      const waitingFor = await unfinishedBlockers();
      if (waitingFor.length > 0) throw blocked(waitingFor);
      return { status: "in_progress", ownerSessionId };
    }
    case "delete": {
      await requireOwnerOrLead();
      const dependents = await tx.teamTask.findMany({
        where: { teamId, status: { not: "deleted" }, blockedBy: { has: taskId } },
        select: { number: true },
        orderBy: { number: "asc" },
      });
      if (dependents.length > 0) {
        const ids = dependents.map((d) => formatTaskId(d.number));
        throw new AppError(
          "TEAM_TASK_HAS_DEPENDENTS",
          `Cannot delete ${taskId}: ${ids.join(", ")} ${ids.length === 1 ? "lists" : "list"} it as a blocker`,
          { taskId, dependents: ids },
        );
      }
      return { status: "deleted" };
    }
  }
}

