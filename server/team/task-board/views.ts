import { z } from "zod";
import type { DbOrTx } from "../../db/client";
import { Prisma, type TeamTask } from "../../db/generated/client";
import { asSessionId, type SessionId } from "../../ids";
import type { SqlRunner } from "../../db/sql";
import { LIMITS } from "../../../shared/limits";
import { memberSessionOf } from "../../members/membership";
import { LEAD_NAME } from "../../members/names";
import { scopesOverlap } from "../write-scopes";
import { invalidArgument, parseInput, requireTaskNumber, taskNotFound } from "./input";
import {
  ListTasksInputSchema,
  TaskViewSchema,
  type ListTasksInput,
  type TaskPage,
  type TaskView,
  type TaskWarning,
} from "./schema";
import { formatTaskId, parseTaskId, taskNumbers } from "../../task-ids";

// Reads and views: rows become TaskViews with owner names, readiness and write-scope
// warnings (shown on pending and in-progress tasks only: a completed or deleted task no
// longer writes anything). Reads take no lock.

export async function ownerNameOf(db: DbOrTx, teamId: string, sessionId: string | null): Promise<string | null> {
  if (sessionId === null) return null;
  if (sessionId === teamId) return LEAD_NAME;
  const s = await db.session.findUnique({ where: { id: sessionId }, select: { memberName: true } });
  return s?.memberName ?? null;
}

async function toViews(db: DbOrTx, teamId: string, rows: TeamTask[]): Promise<TaskView[]> {
  if (rows.length === 0) return [];
  const blockerNumbers = [
    ...new Set(rows.flatMap((r) => taskNumbers(r.blockedBy))),
  ];
  const blockerStatus = new Map<string, string>();
  if (blockerNumbers.length > 0) {
    const blockers = await db.teamTask.findMany({
      where: { teamId, number: { in: blockerNumbers } },
      select: { number: true, status: true },
    });
    for (const b of blockers) blockerStatus.set(formatTaskId(b.number), b.status);
  }

  const wantsWarnings = (r: TeamTask) => (r.status === "pending" || r.status === "in_progress") && r.writeScopes.length > 0;
  const active = rows.some(wantsWarnings)
    ? await db.teamTask.findMany({
        where: { teamId, status: "in_progress" },
        select: { number: true, writeScopes: true },
        orderBy: { number: "asc" },
      })
    : [];

  const ownerIds = [...new Set(rows.map((r) => r.ownerSessionId).filter((id): id is string => id !== null && id !== teamId))];
  const names = new Map<string, string | null>();
  if (ownerIds.length > 0) {
    const sessions = await db.session.findMany({ where: { id: { in: ownerIds } }, select: { id: true, memberName: true } });
    for (const s of sessions) names.set(s.id, s.memberName);
  }

  return rows.map((r) => {
    const warnings: TaskWarning[] = [];
    if (wantsWarnings(r)) {
      for (const other of active) {
        if (other.number === r.number) continue;
        for (const scope of r.writeScopes) {
          for (const otherScope of other.writeScopes) {
            if (scopesOverlap(scope, otherScope)) {
              warnings.push({ code: "WRITE_SCOPE_OVERLAP", taskId: formatTaskId(other.number), scope, otherScope });
            }
          }
        }
      }
    }
    const owner = r.ownerSessionId;
    return TaskViewSchema.parse({
      id: formatTaskId(r.number),
      revision: r.revision,
      subject: r.subject,
      description: r.description,
      status: r.status,
      owner,
      ownerName: owner === null ? null : owner === teamId ? LEAD_NAME : (names.get(owner) ?? null),
      blockedBy: r.blockedBy,
      writeScopes: r.writeScopes,
      ready: r.status === "pending" && r.blockedBy.every((id) => blockerStatus.get(id) === "completed"),
      warnings,
      createdBy: r.createdBy,
      changedBy: r.changedBy,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
    });
  });
}

export async function toView(db: DbOrTx, teamId: string, row: TeamTask): Promise<TaskView> {
  const [view] = await toViews(db, teamId, [row]);
  return view!;
}

// ---------------------------------------------------------------------------------------
// Reads

/** One task, tombstones included. */
export async function getTask(db: DbOrTx, teamId: string, taskId: string): Promise<TaskView> {
  const number = requireTaskNumber(taskId);
  const row = await db.teamTask.findUnique({ where: { teamId_number: { teamId, number } } });
  if (!row) throw taskNotFound(taskId);
  return toView(db, teamId, row);
}

const NumberRows = z.array(z.object({ number: z.number().int() }));

/**
 * Tasks in id order, a page at a time. Deleted tasks appear only with `status: "deleted"`.
 * `owner` is a member name, `lead` or `unowned` (a name that is no member of the team is
 * TEAM_MEMBER_NOT_FOUND); `ready` keeps only (non-)ready tasks; the cursor is the id of the
 * last task of the previous page.
 */
export async function listTasks(db: DbOrTx, teamId: string, input: ListTasksInput = {}): Promise<TaskPage> {
  const q = parseInput(ListTasksInputSchema, input);
  const limit = q.limit ?? LIMITS.taskListDefault;
  const conds: Prisma.Sql[] = [Prisma.sql`t.team_id = ${teamId}`];
  conds.push(q.status === undefined ? Prisma.sql`t.status <> 'deleted'` : Prisma.sql`t.status = ${q.status}`);

  if (q.owner !== undefined) {
    const owner = q.owner.trim();
    if (owner === "unowned") conds.push(Prisma.sql`t.owner_session_id IS NULL`);
    else conds.push(Prisma.sql`t.owner_session_id = ${await memberSessionOf(db, asSessionId(teamId), owner)}`);
  }

  if (q.ready !== undefined) {
    const ready = Prisma.sql`(t.status = 'pending' AND NOT EXISTS (
        SELECT 1 FROM unnest(coalesce(t.blocked_by, '{}'::text[])) AS b(id)
        WHERE NOT EXISTS (SELECT 1 FROM team_tasks d
          WHERE d.team_id = t.team_id AND 'task-' || d.number = b.id AND d.status = 'completed')))`;
    conds.push(q.ready ? ready : Prisma.sql`NOT ${ready}`);
  }

  if (q.cursor !== undefined) {
    const after = parseTaskId(q.cursor);
    if (after === null) throw invalidArgument(`Invalid cursor ${JSON.stringify(q.cursor)}`, { field: "cursor" });
    conds.push(Prisma.sql`t.number > ${after}`);
  }

  const numbers = NumberRows.parse(
    await db.$queryRaw`SELECT t.number FROM team_tasks t WHERE ${Prisma.join(conds, " AND ")}
      ORDER BY t.number LIMIT ${limit + 1}`,
  ).map((r) => r.number);
  const more = numbers.length > limit;
  const page = numbers.slice(0, limit);
  const rows = await db.teamTask.findMany({ where: { teamId, number: { in: page } }, orderBy: { number: "asc" } });
  const tasks = await toViews(db, teamId, rows);
  const last = tasks.at(-1);
  return more && last ? { tasks, nextCursor: last.id } : { tasks };
}

const TaskNumbers = z.array(z.object({ number: z.number().int() }));

/** The tasks `sessionId` has in progress on its team's board (named in what it asks people). */
export async function tasksInProgressOf(db: SqlRunner, sessionId: SessionId): Promise<string[]> {
  const rows = TaskNumbers.parse(
    await db.$queryRaw`SELECT t.number FROM team_tasks t JOIN sessions s ON s.team_id = t.team_id
      WHERE s.id = ${sessionId} AND t.owner_session_id = ${sessionId} AND t.status = 'in_progress' ORDER BY t.number`,
  );
  return rows.map((r) => formatTaskId(r.number));
}
