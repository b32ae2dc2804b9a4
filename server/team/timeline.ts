import { z } from "zod";
import type { DbOrTx } from "../db/client";
import { Prisma } from "../db/generated/client";
import type { SessionId } from "../ids";
import { int4, INT4_MAX } from "../input-guard";
import { LIMITS } from "../limits";
import { MessageSourceSchema, TurnEndReasonSchema } from "../runtime/events";
import { assistantMessageIdOfCallKey } from "../runtime/tools";
import { AuthorSchema, listWorkspaceChanges, type FileChangeView } from "../workspace";
import { FILE_CHANGE_TOOLS } from "../workspace/tools";
import { messageState, TeamMessageStateSchema } from "./mailbox";
import { teamMemberRefs, type MemberRef } from "./membership";
import { ChangedBySchema, formatTaskId, parseTaskId, TaskActionSchema, TaskStatusSchema } from "./task-board";
import { SEND_MESSAGE_TOOL } from "./tools/send-message";
import { TASK_CREATE_TOOL } from "./tools/team-task-create";
import { TASK_UPDATE_TOOL } from "./tools/team-task-update";

// The team timeline: every member's turns, tool calls, people's prompts, team messages, task
// changes and file changes, interleaved in one order (docs/DECISIONS.md, *Timeline order*).
//
// Each source keeps its own commit order: a session's events by seq, the mailbox by seq, the
// action record by id, the workspace by change number. Entries are ordered by (created_at, source, position); pages are a
// k-way merge of the sources from the newest down, so a page always takes a suffix of each
// source and the cursor is one position per source. The live reader moves forward from the
// sources' heads; rows whose ids were allocated before they committed (mailbox, action
// record) are looked for again over a short window, and a message's entry is sent again
// when its state changes (queued → delivered → consumed).

export const TimelineKindSchema = z.enum(["turn", "tool", "prompt", "message", "task", "file"]);
export type TimelineKind = z.infer<typeof TimelineKindSchema>;

/** A task change: `create`, or the board action the change made. */
export const TaskChangeSchema = z.enum(["create", ...TaskActionSchema.options]);

const Common = {
  /** Stable across reads: a reconnect or an overlapping page replaces, never doubles, it. */
  id: z.string(),
  /** Sorts entries (plain string order): created_at, then the source, then its position. */
  order: z.string(),
  at: z.date(),
  /** The member whose work it is (`lead` or a teammate); null when a person acted outside any agent. */
  member: z.string().nullable(),
  /** The moment in that member's transcript (an event seq); null when none holds it. */
  seq: z.number().int().nullable(),
};

export const TimelineEntrySchema = z.discriminatedUnion("kind", [
  z.object({
    ...Common,
    kind: z.literal("turn"),
    phase: z.enum(["start", "end"]),
    reason: TurnEndReasonSchema.nullable(),
    error: z.string().nullable(),
  }),
  z.object({ ...Common, kind: z.literal("tool"), toolName: z.string(), ok: z.boolean(), errorCode: z.string().nullable() }),
  z.object({
    ...Common,
    kind: z.literal("prompt"),
    by: z.object({ id: z.string().nullable(), name: z.string() }).nullable(),
    /** The prompt's beginning (LIMITS.timelineExcerptChars). */
    text: z.string(),
  }),
  z.object({
    ...Common,
    kind: z.literal("message"),
    messageId: z.string(),
    /** The target's name (`member` is the sender). */
    to: z.string(),
    state: TeamMessageStateSchema,
    text: z.string(),
  }),
  z.object({
    ...Common,
    kind: z.literal("task"),
    taskId: z.string(),
    /** Null when the change's tool call could not be found (it is always there for a real result). */
    action: TaskChangeSchema.nullable(),
    /** The task after the change (from the tool's result); for people's changes the current subject only. */
    subject: z.string().nullable(),
    status: TaskStatusSchema.nullable(),
    revision: z.number().int().nullable(),
    ownerName: z.string().nullable(),
    by: ChangedBySchema,
  }),
  /** A new version of a workspace file (a deletion too); it links to that version, not a transcript. */
  z.object({
    ...Common,
    kind: z.literal("file"),
    path: z.string(),
    version: z.number().int(),
    deleted: z.boolean(),
    bytes: z.number().int(),
    by: AuthorSchema,
    taskIds: z.array(z.string()),
    warnings: z.array(z.string()),
  }),
]);
export type TimelineEntry = z.infer<typeof TimelineEntrySchema>;

export const TimelineFilterSchema = z.object({
  /** Only entries of these members (a message: of its sender or target); people's board and file changes drop out. */
  members: z.array(z.string().min(1).max(LIMITS.memberNameChars)).min(1).max(64).optional(),
  kinds: z.array(TimelineKindSchema).min(1).optional(),
});
export type TimelineFilter = z.infer<typeof TimelineFilterSchema>;

// ------------------------------------------------------------------------------ cursors

/** Seqs, the mailbox's seq and workspace changes are int4 columns; action ids are bigint. */
const Pos = int4();
const ActionPos = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** Up to the year 9999: `t` becomes a timestamp parameter. */
const TimePos = z.number().int().min(0).max(253_402_300_799_999);

/**
 * One position per source: `s` a session's seq (by session id), `m` the mailbox's seq, `a` the
 * action record's id, `w` the workspace's change; `t` the time (ms) of the read that made it. An earlier-cursor bounds
 * from above (exclusive; a source missing from it has nothing earlier), a live cursor from
 * below (a session missing from it — a new teammate — is read from its start).
 */
const CursorSchema = z
  .object({
    s: z.record(z.string().min(1).max(64), Pos).refine((r) => Object.keys(r).length <= 256, "too many sessions"),
    m: Pos,
    a: ActionPos,
    // Cursors from before file changes were on the timeline have none.
    w: Pos.default(0),
    t: TimePos,
  })
  .strict();
export type TimelineCursor = z.infer<typeof CursorSchema>;

export function encodeCursor(c: TimelineCursor): string {
  return Buffer.from(JSON.stringify(c)).toString("base64url");
}

/** A cursor as the API carries it (opaque base64url); anything else is INVALID_INPUT. */
export const TimelineCursorString = z
  .string()
  .min(1)
  .max(16 * 1024)
  .regex(/^[A-Za-z0-9_-]+$/, "not a timeline cursor")
  .transform((s, ctx) => {
    let json: unknown;
    try {
      json = JSON.parse(Buffer.from(s, "base64url").toString("utf8"));
    } catch {
      json = null;
    }
    const parsed = CursorSchema.safeParse(json);
    if (parsed.success) return parsed.data;
    ctx.addIssue({ code: "custom", message: "not a timeline cursor" });
    return z.NEVER;
  });

export const TimelinePageSchema = z.object({
  /** Oldest first. */
  entries: z.array(TimelineEntrySchema),
  /** Where the next earlier page starts; null when nothing is earlier. */
  earlier: z.string().nullable(),
});
export type TimelinePage = z.infer<typeof TimelinePageSchema>;

// ------------------------------------------------------------------------------ sources

/** A read entry with its source and its position there. */
interface Sourced {
  source: string;
  pos: number;
  entry: TimelineEntry;
}

/** Source keys sort people's actions, then mail, then sessions' events, then files within one millisecond. */
const ACTIONS = "a";
const MAIL = "m";
const FILES = "w";
const sessionSource = (id: string) => `s${id}`;

function orderKey(at: Date, source: string, pos: number): string {
  return `${String(at.getTime()).padStart(15, "0")}.${source}.${String(pos).padStart(16, "0")}`;
}

/** Reading towards older entries (a page) or newer ones (the live feed). */
type Direction = "older" | "newer";

interface Plan {
  sessions: MemberRef[];
  mail: boolean;
  actions: boolean;
  files: boolean;
  /** Member names whose file changes count (null: everyone's, people's too). */
  filesOf: ReadonlySet<string> | null;
  kinds: readonly TimelineKind[];
  /** Session ids whose messages count (null: everyone's). */
  mailOf: string[] | null;
}

function plan(refs: readonly MemberRef[], filter: TimelineFilter): Plan {
  const kinds = filter.kinds ?? TimelineKindSchema.options;
  const names = filter.members ? new Set(filter.members) : null;
  const sessions = names ? refs.filter((r) => names.has(r.name)) : [...refs];
  const sessionKinds = kinds.filter((k) => k !== "message" && k !== "file");
  return {
    sessions: sessionKinds.length > 0 ? sessions : [],
    mail: kinds.includes("message") && sessions.length > 0,
    // People's board changes belong to no member: a member filter leaves them out.
    actions: kinds.includes("task") && !names,
    files: kinds.includes("file"),
    filesOf: names,
    kinds: sessionKinds,
    mailOf: names ? sessions.map((s) => s.sessionId) : null,
  };
}

// --- sessions' events ----------------------------------------------------------------------

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
async function readSessionEvents(
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
        CASE WHEN c.tl = 'task' AND x.payload->>'toolName' = 'team_task_update' THEN (
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

// --- the mailbox -----------------------------------------------------------------------------

const MailRow = z.object({
  id: z.string(),
  seq: z.number().int(),
  created_at: z.date(),
  sender_session_id: z.string(),
  sender_name: z.string(),
  target_name: z.string(),
  content: z.string(),
  state: z.string(),
  consumed_at: z.date().nullable(),
  tool_call_key: z.string().nullable(),
});
type MailRow = z.infer<typeof MailRow>;
const MailRows = z.array(MailRow);

async function readMail(db: DbOrTx, teamId: SessionId, p: Plan, where: Prisma.Sql, order: Prisma.Sql, limit: number): Promise<MailRow[]> {
  if (!p.mail) return [];
  const of = p.mailOf ? Prisma.sql`AND (m.sender_session_id = ANY(${p.mailOf}::text[]) OR m.target_session_id = ANY(${p.mailOf}::text[]))` : Prisma.empty;
  const rows = await db.$queryRaw`
    SELECT m.id, m.seq, m.created_at, m.sender_session_id, m.sender_name, m.target_name,
      left(m.content, ${LIMITS.timelineExcerptChars}) AS content, m.state, m.consumed_at, m.tool_call_key
    FROM team_messages m WHERE m.team_id = ${teamId} AND ${where} ${of}
    ORDER BY ${order} LIMIT ${limit}`;
  return MailRows.parse(rows);
}

/** Message entries; each links to the sender's reply that called send_message. */
async function mailEntries(db: DbOrTx, rows: readonly MailRow[]): Promise<Sourced[]> {
  const replyOf = new Map(rows.map((r) => [r.id, r.tool_call_key ? assistantMessageIdOfCallKey(r.tool_call_key) : null]));
  const replyIds = [...new Set([...replyOf.values()].filter((v): v is string => v !== null))];
  const replies = replyIds.length
    ? await db.sessionEvent.findMany({
        where: { sessionId: { in: [...new Set(rows.map((r) => r.sender_session_id))] }, messageId: { in: replyIds } },
        select: { sessionId: true, messageId: true, seq: true },
      })
    : [];
  const seqOf = new Map(replies.map((e) => [`${e.sessionId}/${e.messageId}`, e.seq]));
  return rows.map((r) => {
    const reply = replyOf.get(r.id);
    return {
      source: MAIL,
      pos: r.seq,
      entry: {
        id: `m:${r.id}`,
        order: orderKey(r.created_at, MAIL, r.seq),
        at: r.created_at,
        member: r.sender_name,
        seq: reply ? (seqOf.get(`${r.sender_session_id}/${reply}`) ?? null) : null,
        kind: "message",
        messageId: r.id,
        to: r.target_name,
        state: messageState({ state: r.state, consumedAt: r.consumed_at }),
        text: r.content,
      },
    };
  });
}

// --- people's board changes ------------------------------------------------------------------

const ActionRow = z.object({ id: z.bigint(), created_at: z.date(), user_id: z.string(), user_name: z.string(), detail: z.unknown() });
type ActionRow = z.infer<typeof ActionRow>;
const ActionRows = z.array(ActionRow);
const TaskChangedDetail = z.object({ taskId: z.string(), action: TaskChangeSchema });

async function readActions(db: DbOrTx, teamId: SessionId, p: Plan, where: Prisma.Sql, order: Prisma.Sql, limit: number): Promise<ActionRow[]> {
  if (!p.actions) return [];
  const rows = await db.$queryRaw`
    SELECT id, created_at, user_id, user_name, detail FROM person_actions
    WHERE team_id = ${teamId} AND action = 'task_changed' AND ${where}
    ORDER BY ${order} LIMIT ${limit}`;
  return ActionRows.parse(rows);
}

async function actionEntries(db: DbOrTx, teamId: SessionId, rows: readonly ActionRow[]): Promise<Sourced[]> {
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

// --- the workspace ---------------------------------------------------------------------------

/** Pages of the workspace's changes one read goes through looking for a member filter's. */
const FILE_SCAN_PAGES = 10;

function fileEntry(c: FileChangeView): Sourced {
  return {
    source: FILES,
    pos: c.change,
    entry: {
      id: `w:${c.change}`,
      order: orderKey(c.createdAt, FILES, c.change),
      at: c.createdAt,
      member: c.author.kind === "member" ? c.author.name : null,
      seq: null,
      kind: "file",
      path: c.path,
      version: c.version,
      deleted: c.deleted,
      bytes: c.bytes,
      by: c.author,
      taskIds: c.taskIds,
      warnings: c.warnings,
    },
  };
}

const fileCounts = (p: Plan) => (c: FileChangeView) => !p.filesOf || (c.author.kind === "member" && p.filesOf.has(c.author.name));

/**
 * Up to `limit` file changes below `bound`, newest first. With a member filter, pages are read
 * until enough match, the history ends, or FILE_SCAN_PAGES were read; `floor` is then the
 * lowest change looked at, `newest` the newest change seen.
 */
async function readOlderFiles(db: DbOrTx, teamId: SessionId, p: Plan, bound: number, limit: number) {
  const rows: Sourced[] = [];
  let floor = bound;
  let newest = 0;
  let exhausted = false;
  for (let n = 0; n < FILE_SCAN_PAGES && rows.length < limit; n++) {
    const page = await listWorkspaceChanges(db, teamId, { beforeChange: floor, limit });
    newest ||= page.at(-1)?.change ?? 0;
    rows.push(...page.filter(fileCounts(p)).reverse().map(fileEntry));
    exhausted = page.length < limit;
    if (exhausted) break;
    floor = page[0]!.change;
  }
  // Matches beyond `limit` are left for the next page (below the lowest taken one).
  return { rows: rows.slice(0, limit), floor, newest, exhausted: exhausted && rows.length <= limit };
}

const HeadRow = z.array(z.object({ m: z.number().int(), a: z.bigint() }));

/** The mailbox's and the action record's newest positions for the team. */
async function heads(db: DbOrTx, teamId: SessionId): Promise<{ m: number; a: number }> {
  const [row] = HeadRow.parse(
    await db.$queryRaw`SELECT
      (SELECT coalesce(max(seq), 0) FROM team_messages WHERE team_id = ${teamId}) AS m,
      (SELECT coalesce(max(id), 0)::bigint FROM person_actions WHERE team_id = ${teamId}) AS a`,
  );
  return { m: row!.m, a: Number(row!.a) };
}

// ------------------------------------------------------------------------------ pages

interface Listed {
  source: string;
  /** Newest first. */
  rows: Sourced[];
  /** Nothing older than `rows` is left in the source. */
  exhausted: boolean;
  /** Where to go on from when no row of it is taken (a scan that found too few). */
  floor?: number;
}

function sessionLists(p: Plan, rows: readonly EventRow[], limit: number): { lists: Listed[]; lastSeq: Map<string, number> } {
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

/**
 * The newest `limit` entries before `before` (or the newest of all), oldest first, with the
 * cursor of the page before them and the sources' heads (where a live reader goes on from).
 */
async function newestPage(
  db: DbOrTx,
  teamId: SessionId,
  refs: readonly MemberRef[],
  filter: TimelineFilter,
  before: TimelineCursor | null,
  limit: number,
) {
  const t = Date.now();
  const p = plan(refs, filter);
  const sessionBounds = new Map(p.sessions.map((s) => [s.sessionId as string, before ? (before.s[s.sessionId] ?? 0) : INT4_MAX]));
  const mailBound = before ? before.m : INT4_MAX;
  const actionBound = before ? before.a : Number.MAX_SAFE_INTEGER;
  const fileBound = before ? before.w : INT4_MAX;
  const [events, mail, actions, files, head] = await Promise.all([
    readSessionEvents(db, p, sessionBounds, "older", limit),
    readMail(db, teamId, p, Prisma.sql`m.seq < ${mailBound}`, Prisma.sql`m.seq DESC`, limit),
    readActions(db, teamId, p, Prisma.sql`id < ${actionBound}`, Prisma.sql`id DESC`, limit),
    p.files ? readOlderFiles(db, teamId, p, fileBound, limit) : null,
    heads(db, teamId),
  ]);
  const { lists, lastSeq } = sessionLists(p, events, limit);
  if (p.mail) lists.push({ source: MAIL, rows: await mailEntries(db, mail), exhausted: mail.length < limit });
  if (p.actions) lists.push({ source: ACTIONS, rows: await actionEntries(db, teamId, actions), exhausted: actions.length < limit });
  if (files) lists.push({ source: FILES, rows: files.rows, exhausted: files.exhausted, floor: files.floor });

  // k-way merge from the newest: each source gives up a suffix of what it holds.
  const at = lists.map(() => 0);
  const taken: Sourced[] = [];
  while (taken.length < limit) {
    let best = -1;
    for (let i = 0; i < lists.length; i++) {
      const row = lists[i]!.rows[at[i]!];
      if (row && (best < 0 || row.entry.order > lists[best]!.rows[at[best]!]!.entry.order)) best = i;
    }
    if (best < 0) break;
    taken.push(lists[best]!.rows[at[best]!]!);
    at[best]!++;
  }

  // The next page's bound per source: below what was taken; where it was when nothing was.
  const boundOf = (l: Listed, i: number, old: number): number => {
    if (at[i]! > 0) return l.rows[at[i]! - 1]!.pos;
    if (l.rows.length > 0) return Math.min(old, l.rows[0]!.pos + 1);
    return l.exhausted ? 0 : (l.floor ?? old);
  };
  const earlier: TimelineCursor = { s: {}, m: 0, a: 0, w: 0, t: 0 };
  lists.forEach((l, i) => {
    if (l.source === MAIL) earlier.m = boundOf(l, i, mailBound);
    else if (l.source === ACTIONS) earlier.a = boundOf(l, i, actionBound);
    else if (l.source === FILES) earlier.w = boundOf(l, i, fileBound);
    else earlier.s[l.source.slice(1)] = boundOf(l, i, sessionBounds.get(l.source.slice(1)) ?? 0);
  });
  const more = lists.some((l, i) => !l.exhausted || at[i]! < l.rows.length);

  const live: TimelineCursor = { s: Object.fromEntries(lastSeq), m: head.m, a: head.a, w: files?.newest ?? 0, t };
  return { taken: taken.reverse(), earlier: more ? earlier : null, live };
}

/** The newest entries before `before` (the room opens with the newest page). */
export async function timelinePage(
  db: DbOrTx,
  teamId: SessionId,
  opts: { before?: TimelineCursor; limit?: number; filter?: TimelineFilter } = {},
): Promise<TimelinePage> {
  const refs = await teamMemberRefs(db, teamId);
  const page = await newestPage(db, teamId, refs, opts.filter ?? {}, opts.before ?? null, pageLimit(opts.limit));
  return { entries: page.taken.map((t) => t.entry), earlier: page.earlier && encodeCursor(page.earlier) };
}

function pageLimit(limit: number | undefined): number {
  return Math.min(LIMITS.timelinePageMax, Math.max(1, Math.floor(limit ?? LIMITS.timelinePageDefault)));
}

// ------------------------------------------------------------------------------ following

/**
 * How far back the live reader looks again for mailbox and action rows: their ids are taken
 * when the row is inserted, so a row can commit after a higher one was read, but never later
 * than a transaction may last (15 s, db/client.ts).
 */
export const TIMELINE_LOOKBACK_MS = 30_000;
/** Rows per source in one live read; a source that fills it is read again at once. */
const FEED_BATCH = 500;

/** What a live reader keeps between reads: where it is, and what it sent of recent rows. */
export interface TimelineFollower {
  cursor: TimelineCursor | null;
  /** Entry id → what was sent (a message's state), for the rows still inside the lookback. */
  sent: Map<string, string>;
}

/** What of an entry can change after it was sent: a message's state. */
const sentAs = (e: TimelineEntry) => (e.kind === "message" ? e.state : "");

export function newFollower(cursor: TimelineCursor | null): TimelineFollower {
  return { cursor, sent: new Map() };
}

export type TimelineRead =
  | { type: "page"; entries: TimelineEntry[]; earlier: string | null }
  | { type: "entries"; entries: TimelineEntry[]; more: boolean };

/**
 * One read of a live timeline: without a cursor the newest page (a fresh room), then what
 * committed since, and messages whose state changed. Updates `follower`. `refs` are the
 * team's members (teamMemberRefs; the feed reads them anyway to know whom to wait for).
 */
export async function followTimeline(
  db: DbOrTx,
  teamId: SessionId,
  filter: TimelineFilter,
  follower: TimelineFollower,
  refs?: readonly MemberRef[],
): Promise<TimelineRead> {
  refs ??= await teamMemberRefs(db, teamId);
  const cursor = follower.cursor;
  if (!cursor) {
    const page = await newestPage(db, teamId, refs, filter, null, LIMITS.timelinePageDefault);
    follower.cursor = page.live;
    // What the page holds of the mailbox and the record counts as sent.
    follower.sent = new Map(page.taken.filter((t) => t.source === MAIL || t.source === ACTIONS).map((t) => [t.entry.id, sentAs(t.entry)]));
    return { type: "page", entries: page.taken.map((t) => t.entry), earlier: page.earlier && encodeCursor(page.earlier) };
  }
  const now = Date.now();
  const since = new Date(cursor.t - TIMELINE_LOOKBACK_MS);
  const p = plan(refs, filter);
  const bounds = new Map(p.sessions.map((s) => [s.sessionId as string, cursor.s[s.sessionId] ?? 0]));
  const [events, newMail, recentMail, newActions, recentActions, files] = await Promise.all([
    readSessionEvents(db, p, bounds, "newer", FEED_BATCH),
    readMail(db, teamId, p, Prisma.sql`m.seq > ${cursor.m}`, Prisma.sql`m.seq`, FEED_BATCH),
    readMail(
      db,
      teamId,
      p,
      Prisma.sql`m.seq <= ${cursor.m} AND (m.created_at > ${since} OR m.delivered_at > ${since} OR m.consumed_at > ${since})`,
      Prisma.sql`m.seq`,
      FEED_BATCH,
    ),
    readActions(db, teamId, p, Prisma.sql`id > ${cursor.a}`, Prisma.sql`id`, FEED_BATCH),
    readActions(db, teamId, p, Prisma.sql`id <= ${cursor.a} AND created_at > ${since}`, Prisma.sql`id`, FEED_BATCH),
    // Change numbers are taken under the workspace's lock and commit in order: no lookback.
    p.files ? listWorkspaceChanges(db, teamId, { afterChange: cursor.w, limit: FEED_BATCH }) : [],
  ]);

  const next: TimelineCursor = { s: { ...cursor.s }, m: cursor.m, a: cursor.a, w: files.at(-1)?.change ?? cursor.w, t: now };
  const out: TimelineEntry[] = [];
  let more = false;
  const { lists, lastSeq } = sessionLists(p, events, FEED_BATCH);
  for (const l of lists) {
    const id = l.source.slice(1);
    out.push(...l.rows.map((r) => r.entry));
    const full = events.filter((r) => r.session_id === id && r.seq !== null).length === FEED_BATCH;
    more ||= full;
    const last = l.rows.at(-1)?.pos;
    next.s[id] = full && last !== undefined ? last : Math.max(cursor.s[id] ?? 0, lastSeq.get(id) ?? 0);
  }
  // Mailbox and action rows: new ones, and recent ones not sent yet or whose state changed.
  const recent = [...(await mailEntries(db, [...recentMail, ...newMail])), ...(await actionEntries(db, teamId, [...recentActions, ...newActions]))];
  const sent = new Map<string, string>();
  for (const r of recent) {
    const sig = sentAs(r.entry);
    sent.set(r.entry.id, sig);
    if (follower.sent.get(r.entry.id) !== sig) out.push(r.entry);
    if (r.source === MAIL) next.m = Math.max(next.m, r.pos);
    else next.a = Math.max(next.a, r.pos);
  }
  out.push(...files.filter(fileCounts(p)).map((c) => fileEntry(c).entry));
  more ||= newMail.length === FEED_BATCH || newActions.length === FEED_BATCH || files.length === FEED_BATCH;
  follower.sent = sent;
  follower.cursor = next;
  return { type: "entries", entries: out.sort((x, y) => (x.order < y.order ? -1 : x.order > y.order ? 1 : 0)), more };
}
