import { z } from "zod";
import type { DbOrTx } from "../../db/client";
import type { Prisma } from "../../db/generated/client";
import type { SessionId } from "../../ids";

import { TaskChangeSchema } from "./schema";
import { ACTIONS, orderKey, type Plan, type Sourced } from "./sources";
import { formatTaskId, parseTaskId } from "../../task-ids";

// People's board changes (the action record's task_changed rows), each as a task entry.

const ActionRow = z.object({ id: z.bigint(), created_at: z.date(), user_id: z.string(), user_name: z.string(), detail: z.unknown() });
type ActionRow = z.infer<typeof ActionRow>;
const ActionRows = z.array(ActionRow);
const TaskChangedDetail = z.object({ taskId: z.string(), action: TaskChangeSchema });

export async function readActions(db: DbOrTx, teamId: SessionId, p: Plan, where: Prisma.Sql, order: Prisma.Sql, limit: number): Promise<ActionRow[]> {
  if (!p.actions) return [];
  const rows = await db.$queryRaw`
    SELECT id, created_at, user_id, user_name, detail FROM person_actions
    WHERE team_id = ${teamId} AND action = 'task_changed' AND ${where}
    ORDER BY ${order} LIMIT ${limit}`;
  return ActionRows.parse(rows);
}

export async function actionEntries(db: DbOrTx, teamId: SessionId, rows: readonly ActionRow[]): Promise<Sourced[]> {
  const parsed = rows.map((r) => ({ row: r, detail: TaskChangedDetail.parse(r.detail) }));
  const numbers = [...new Set(parsed.map((x) => parseTaskId(x.detail.taskId)).filter((n): n is number => n !== null))];
  const tasks = numbers.length
    ? await db.teamTask.findMany({ where: { teamId, number: { in: numbers } }, select: { number: true, subject: true } })
    : [];
  const subjectOf = new Map(tasks.map((t) => [formatTaskId(t.number), t.subject]));
  return parsed.map(({ row, detail }) => {
    const pos = Number(row.id);
    return {
      source: ACTIONS,
      pos,
      entry: {
        id: `a:${pos}`,
        order: orderKey(row.created_at, ACTIONS, pos),
        at: row.created_at,
        member: null,
        seq: null,
        kind: "task",
        taskId: detail.taskId,
        action: detail.action,
        subject: subjectOf.get(detail.taskId) ?? null,
        status: null,
        revision: null,
        ownerName: null,
        by: { kind: "person", id: row.user_id, name: row.user_name },
      },
    };
  });
}
