import type { Tx } from "../../db/client";
import { AppError } from "../../errors";
import { findCycle } from "./graph";
import { taskNotFound } from "./input";
import { formatTaskId, taskNumbers } from "../../task-ids";

// Dependencies name existing, non-deleted tasks of the same team, and keep the board a DAG.
// Both run inside a board transaction (team row locked), so the graph cannot change under them.

export async function checkDependenciesExist(tx: Tx, teamId: string, numbers: number[]): Promise<void> {
  if (numbers.length === 0) return;
  const rows = await tx.teamTask.findMany({
    where: { teamId, number: { in: numbers } },
    select: { number: true, status: true },
  });
  const status = new Map(rows.map((r) => [r.number, r.status]));
  for (const n of numbers) {
    const s = status.get(n);
    if (s === undefined) throw taskNotFound(formatTaskId(n));
    if (s === "deleted") {
      throw new AppError("TEAM_TASK_DELETED", `${formatTaskId(n)} is deleted and cannot be a dependency`, {
        taskId: formatTaskId(n),
      });
    }
  }
}

/** With `number` now blocked by `deps`, the graph must stay acyclic. */
export async function checkAcyclic(tx: Tx, teamId: string, number: number, deps: number[]): Promise<void> {
  const rows = deps.includes(number)
    ? []
    : await tx.teamTask.findMany({ where: { teamId, status: { not: "deleted" } }, select: { number: true, blockedBy: true } });
  const edges = new Map(rows.map((r) => [r.number, taskNumbers(r.blockedBy)]));
  const path = findCycle(edges, number, deps);
  if (path === null) return;
  const cycle = path.map(formatTaskId);
  throw new AppError(
    "TEAM_TASK_DEPENDENCY_CYCLE",
    `These dependencies would form a cycle: ${cycle.join(" → ")} (each task waits for the next)`,
    { taskId: formatTaskId(number), cycle },
  );
}
