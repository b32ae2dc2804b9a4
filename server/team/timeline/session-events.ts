import { z } from "zod";
import type { DbOrTx } from "../../db/client";
import { Prisma } from "../../db/generated/client";
import { INT4_MAX } from "../../../shared/input-guard";
import { LIMITS } from "../../../shared/limits";
import { MessageSourceSchema, TurnEndReasonSchema } from "../../runtime/events";
import { FILE_CHANGE_TOOLS } from "../../workspace/tools";
import { TaskActionSchema, TaskStatusSchema } from "../task-board";
import { SEND_MESSAGE_TOOL } from "../tools/send-message";
import { TASK_CREATE_TOOL } from "../tools/team-task-create";
import { TASK_UPDATE_TOOL } from "../tools/team-task-update";
import { TimelineKindSchema, type TimelineEntry } from "./schema";
import { orderKey, sessionSource, type Listed, type Plan, type Sourced } from "./sources";

/** Reading towards older entries (a page) or newer ones (the live feed). */
type Direction = "older" | "newer";

/**
 * Which timeline kind a session event is, if any: the one classification (SQL, so pages are
 * bounded after filtering). A successful send_message is the mailbox's message entry, a
 * workspace change that made a version is the workspace's file entry; a successful task tool
 * call is a task entry; any other tool result is a tool entry.
 */
const EVENT_KIND = Prisma.sql`CASE
  WHEN x.kind IN ('turn_start', 'turn_end') THEN 'turn'
  WHEN x.kind = 'user_message' THEN CASE WHEN x.payload->'source'->>'kind' = 'human' THEN 'prompt' END
  WHEN x.kind <> 'tool_result' THEN NULL
  WHEN x.payload->>'isError' = 'true' THEN 'tool'
  WHEN x.payload->>'toolName' IN (${Prisma.join([TASK_CREATE_TOOL, TASK_UPDATE_TOOL])}) THEN 'task'
  WHEN x.payload->>'toolName' = ${SEND_MESSAGE_TOOL} THEN NULL
  WHEN x.payload->>'toolName' IN (${Prisma.join(Object.values(FILE_CHANGE_TOOLS))})
    AND x.payload->'output'->>'unchanged' IS NULL THEN NULL
  ELSE 'tool' END`;

const EventRow = z.object({
  session_id: z.string(),
  last_seq: z.number().int(),
  seq: z.number().int().nullable(),
  created_at: z.date().nullable(),
  kind: z.string().nullable(),
  tl: TimelineKindSchema.nullable(),
  reason: z.string().nullable(),
  error: z.string().nullable(),
  tool_name: z.string().nullable(),
  is_error: z.boolean().nullable(),
  error_code: z.string().nullable(),
  source: z.unknown(),
  text: z.string().nullable(),
  task_id: z.string().nullable(),
  task_subject: z.string().nullable(),
  task_status: z.string().nullable(),
  task_revision: z.number().int().nullable(),
  task_owner: z.string().nullable(),
  task_action: z.string().nullable(),
});
type EventRow = z.infer<typeof EventRow>;
const EventRows = z.array(EventRow);

/**
 * Up to `limit` timeline events of each session beyond its bound, and each session's last seq,
 * in one statement (one snapshot: the last seqs match the events read). Only small fields of
 * the payloads leave the database (tool outputs can be large).
 */
export async function readSessionEvents(
  db: DbOrTx,
  p: Plan,
  bounds: ReadonlyMap<string, number>,
  dir: Direction,
  limit: number,
): Promise<EventRow[]> {
  if (p.sessions.length === 0) return [];
  const ids = p.sessions.map((s) => s.sessionId);
  const bound = ids.map((id) => bounds.get(id) ?? (dir === "older" ? INT4_MAX : 0));
  const range = dir === "older" ? Prisma.sql`x.seq < b.bound` : Prisma.sql`x.seq > b.bound`;
  const order = dir === "older" ? Prisma.sql`x.seq DESC` : Prisma.sql`x.seq ASC`;
  const rows = await db.$queryRaw`
    SELECT s.id AS session_id, s.last_seq, e.seq, e.created_at, e.kind, e.tl,
      e.payload->>'reason' AS reason, left(e.payload->>'error', 500) AS error,
      e.payload->>'toolName' AS tool_name, (e.payload->>'isError')::boolean AS is_error, e.payload->>'errorCode' AS error_code,
      e.payload->'source' AS source, left(e.payload->>'text', ${LIMITS.timelineExcerptChars}) AS text,
      e.payload->'output'->>'id' AS task_id, e.payload->'output'->>'subject' AS task_subject,
      e.payload->'output'->>'status' AS task_status, (e.payload->'output'->>'revision')::int AS task_revision,
      e.payload->'output'->>'ownerName' AS task_owner, e.task_action
    FROM unnest(${ids}::text[], ${bound}::int[]) AS b(id, bound)
    JOIN sessions s ON s.id = b.id
    LEFT JOIN LATERAL (
      SELECT x.seq, x.created_at, x.kind, x.payload, c.tl,
        -- An update's action is in its call, in the nearest assistant message of the turn before it.
        CASE WHEN c.tl = 'task' AND x.payload->>'toolName' = ${TASK_UPDATE_TOOL} THEN (
          SELECT tc->'input'->>'action' FROM session_events a CROSS JOIN LATERAL jsonb_array_elements(a.payload->'toolCalls') tc
          WHERE a.session_id = x.session_id AND a.seq < x.seq AND a.kind = 'assistant_message' AND a.turn_id = x.turn_id
            AND tc->>'toolCallId' = x.payload->>'toolCallId'
          ORDER BY a.seq DESC LIMIT 1) END AS task_action
      FROM session_events x CROSS JOIN LATERAL (SELECT ${EVENT_KIND} AS tl) c
      WHERE x.session_id = b.id AND x.kind IN ('turn_start', 'turn_end', 'user_message', 'tool_result')
        AND c.tl = ANY(${p.kinds}::text[]) AND ${range}
      ORDER BY ${order} LIMIT ${limit}
    ) e ON true`;
  return EventRows.parse(rows);
}

const EventTaskId = z.string();
const EventTaskAction = TaskActionSchema.nullable();
const EventTaskStatus = TaskStatusSchema.nullable();

function eventEntry(r: EventRow, member: string): Sourced | null {
  if (r.seq === null || r.created_at === null || r.tl === null) return null;
  const source = sessionSource(r.session_id);
  const common = { id: `e:${r.session_id}:${r.seq}`, order: orderKey(r.created_at, source, r.seq), at: r.created_at, member, seq: r.seq };
  const entry = ((): TimelineEntry => {
    switch (r.tl) {
      case "turn":
        return {
          ...common,
          kind: "turn",
          phase: r.kind === "turn_start" ? "start" : "end",
          reason: r.kind === "turn_end" ? TurnEndReasonSchema.parse(r.reason) : null,
          error: r.error,
        };
      case "prompt": {
        const src = MessageSourceSchema.parse(r.source);
        const by = src.kind === "human" && src.name ? { id: src.userId ?? null, name: src.name } : null;
        return { ...common, kind: "prompt", by, text: r.text ?? "" };
      }
      case "task":
        return {
          ...common,
          kind: "task",
          taskId: EventTaskId.parse(r.task_id),
          action: r.tool_name === TASK_CREATE_TOOL ? "create" : EventTaskAction.parse(r.task_action),
          subject: r.task_subject,
          status: EventTaskStatus.parse(r.task_status),
          revision: r.task_revision,
          ownerName: r.task_owner,
          by: { kind: "member", name: member },
        };
      case "tool":
        return { ...common, kind: "tool", toolName: r.tool_name ?? "", ok: r.is_error === false, errorCode: r.error_code };
      case "message":
      case "file":
        throw new Error(`${r.tl} entries come from the mailbox and the workspace`);
    }
  })();
  return { source, pos: r.seq, entry };
}

/** Each session's entries as the list of its own source, and each session's last seq. */
export function sessionLists(p: Plan, rows: readonly EventRow[], limit: number): { lists: Listed[]; lastSeq: Map<string, number> } {
  const names = new Map(p.sessions.map((s) => [s.sessionId as string, s.name]));
  const lastSeq = new Map<string, number>();
  const bySession = new Map<string, Sourced[]>();
  for (const r of rows) {
    lastSeq.set(r.session_id, r.last_seq);
    const e = eventEntry(r, names.get(r.session_id) ?? "lead");
    if (!e) continue;
    const list = bySession.get(r.session_id) ?? [];
    list.push(e);
    bySession.set(r.session_id, list);
  }
  const lists = p.sessions.map((s) => {
    const list = bySession.get(s.sessionId) ?? [];
    return { source: sessionSource(s.sessionId), rows: list, exhausted: list.length < limit };
  });
  return { lists, lastSeq };
}
