import { z } from "zod";
import { inTx, type DbOrTx, type Tx } from "../db/client";
import { Prisma, type TeamTask } from "../db/generated/client";
import { AppError } from "../errors";
import { notifyActivity } from "../live/activity";
import { LEAD_NAME } from "./names";
import { normaliseWriteScopes, scopesOverlap } from "./write-scopes";

// The team task board (spec section 8): plain domain functions over the database, shared by
// the team_task_* tools and the browser (a human acts with Lead authority).
//
// Every mutation runs in one transaction that first locks the team row
// (`SELECT … FROM teams … FOR UPDATE`). That serialises all board changes of a team, so the
// revision compare-and-set, the live-task limit, the id counter and the DAG check cannot race;
// other teams are not affected. Reads take no lock.
//
// Choices where the spec is silent:
// - Check order for an update: unknown task → TEAM_TASK_NOT_FOUND; deleted → TEAM_TASK_DELETED
//   (terminal, re-reading would not help); revision mismatch → TEAM_TASK_STALE_REVISION;
//   then authority (against the current owner) → TEAM_TASK_UNAUTHORIZED; then the action's
//   precondition.
// - Authority is exactly the spec table: the task's creator has no special rights.
// - Ids that are not `task-<n>` (n ≥ 1, canonical, fits int4) name no task: TEAM_TASK_NOT_FOUND.
// - Subjects are trimmed and counted in Unicode code points (1–200). Descriptions are stored as
//   given; the 16 KiB limit counts UTF-8 bytes; empty is allowed. NUL characters (which
//   Postgres text cannot hold) are rejected with TEAM_INVALID_ARGUMENT.
// - Write scopes are normalised (write-scopes.ts) and de-duplicated; at most 64 per task.
// - `complete` keeps the owner (the view shows who did it); `release` / `reopen` clear it;
//   `delete` keeps the tombstone as it was apart from the status.
// - `claim` of a task already in progress and owned by the caller is TEAM_TASK_INVALID_TRANSITION
//   (no silent no-op: every success bumps the revision).
// - `reassign`: the target must be `lead` or an active member (unknown name →
//   TEAM_MEMBER_NOT_FOUND, provisioning/failed member → TEAM_INVALID_TARGET); "ready" for an
//   in-progress task means all its blockers are completed. A blank owner (omitted, null, or
//   whitespace) unassigns: the task goes back to pending with no owner.
// - `set_dependencies` and `edit` are allowed in any non-deleted status.
// - Write-scope overlap warnings are shown on pending and in-progress tasks only (a completed
//   or deleted task no longer writes anything).
// - `listTasks` hides deleted tasks unless `status: "deleted"` is asked for; an owner filter
//   naming no member of the team fails TEAM_MEMBER_NOT_FOUND; the cursor is the id of the last
//   task of the previous page.
// - The actor must be consistent with the team: the Lead acts with the team id as its session
//   id and the name `lead`; a teammate must be in team_members with that session id.
//   Otherwise TEAM_NOT_MEMBER (also for an unknown team).

export const MAX_SUBJECT_CHARS = 200;
export const MAX_DESCRIPTION_BYTES = 16 * 1024;
export const MAX_WRITE_SCOPES_PER_TASK = 64;
export const MAX_DEPENDENCIES_PER_TASK = 1024;
export const DEFAULT_MAX_TASKS = 256;
export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 100;

export const TaskStatusSchema = z.enum(["pending", "in_progress", "completed", "deleted"]);
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

export const TaskActionSchema = z.enum([
  "claim",
  "release",
  "edit",
  "set_dependencies",
  "complete",
  "reopen",
  "reassign",
  "delete",
]);
export type TaskAction = z.infer<typeof TaskActionSchema>;

export const TaskWarningSchema = z.object({
  code: z.literal("WRITE_SCOPE_OVERLAP"),
  /** The other, in-progress task. */
  taskId: z.string(),
  /** This task's scope. */
  scope: z.string(),
  /** The other task's overlapping scope. */
  otherScope: z.string(),
});
export type TaskWarning = z.infer<typeof TaskWarningSchema>;

export const TaskViewSchema = z.object({
  id: z.string(),
  revision: z.number().int(),
  subject: z.string(),
  description: z.string(),
  status: TaskStatusSchema,
  /** The owning session id (the team id for the Lead). */
  owner: z.string().nullable(),
  /** The owner's member name, or `lead`. */
  ownerName: z.string().nullable(),
  blockedBy: z.array(z.string()),
  writeScopes: z.array(z.string()),
  /** Pending and every blocker completed. */
  ready: z.boolean(),
  warnings: z.array(TaskWarningSchema),
  createdBy: z.string(),
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type TaskView = z.infer<typeof TaskViewSchema>;

/** Who acts. The Lead (and a human in the browser) acts as `{ sessionId: teamId, name: "lead", isLead: true }`. */
export type Actor = { sessionId: string; name: string; isLead: boolean };

export interface TaskBoardLimits {
  /** Live (non-deleted) tasks per team. */
  maxTasks: number;
}

export const CreateTaskInputSchema = z.object({
  subject: z.string(),
  description: z.string(),
  blockedBy: z.array(z.string()).optional(),
  writeScopes: z.array(z.string()).optional(),
});
export type CreateTaskInput = z.infer<typeof CreateTaskInputSchema>;

/** Flat on purpose (like the tool input): each action takes only its own fields. */
export const UpdateTaskInputSchema = z.object({
  taskId: z.string(),
  expectedRevision: z.number().int().min(1),
  action: TaskActionSchema,
  /** edit */
  subject: z.string().optional(),
  /** edit */
  description: z.string().optional(),
  /** edit */
  writeScopes: z.array(z.string()).optional(),
  /** set_dependencies (required; replaces the edges) */
  blockedBy: z.array(z.string()).optional(),
  /** reassign: a member name or `lead`; blank unassigns */
  owner: z.string().nullable().optional(),
});
export type UpdateTaskInput = z.infer<typeof UpdateTaskInputSchema>;

export const ListTasksInputSchema = z.object({
  status: TaskStatusSchema.optional(),
  /** A member name, `lead`, or `unowned`. */
  owner: z.string().optional(),
  ready: z.boolean().optional(),
  /** The id of the last task of the previous page (its `nextCursor`). */
  cursor: z.string().optional(),
  limit: z.number().int().min(1).max(MAX_LIST_LIMIT).optional(),
});
export type ListTasksInput = z.infer<typeof ListTasksInputSchema>;

export type TaskPage = { tasks: TaskView[]; nextCursor?: string };

// ---------------------------------------------------------------------------------------
// Ids and input validation (pure)

const TASK_ID = /^task-([1-9][0-9]{0,9})$/;
const INT4_MAX = 2_147_483_647;

export function formatTaskId(n: number): string {
  return `task-${n}`;
}

/** The task number of a canonical `task-<n>` id, or null. */
export function parseTaskId(id: string): number | null {
  const m = TASK_ID.exec(id);
  if (!m) return null;
  const n = Number(m[1]);
  return n <= INT4_MAX ? n : null;
}

function taskNotFound(id: string): AppError {
  const hint = parseTaskId(id) === null ? " (task ids look like task-<n>)" : "";
  return new AppError("TEAM_TASK_NOT_FOUND", `No task ${JSON.stringify(id)} on this team's board${hint}`, {
    taskId: id,
  });
}

function requireTaskNumber(id: string): number {
  const n = parseTaskId(id);
  if (n === null) throw taskNotFound(id);
  return n;
}

function invalidArgument(message: string, details?: Record<string, unknown>): AppError {
  return new AppError("TEAM_INVALID_ARGUMENT", message, details);
}

function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => `${i.path.join(".") || "input"}: ${i.message}`);
  throw invalidArgument(`Invalid input: ${issues.join("; ")}`, { issues });
}

function checkNoNul(field: string, value: string): void {
  if (value.includes("\u0000")) throw invalidArgument(`${field} must not contain NUL characters`, { field });
}

function checkSubject(raw: string): string {
  const subject = raw.trim();
  checkNoNul("subject", subject);
  const chars = [...subject].length;
  if (chars === 0) throw invalidArgument("subject must not be empty", { field: "subject" });
  if (chars > MAX_SUBJECT_CHARS) {
    throw invalidArgument(`subject is ${chars} characters; at most ${MAX_SUBJECT_CHARS} are allowed`, {
      field: "subject",
      length: chars,
      max: MAX_SUBJECT_CHARS,
    });
  }
  return subject;
}

function checkDescription(description: string): string {
  checkNoNul("description", description);
  const bytes = Buffer.byteLength(description, "utf8");
  if (bytes > MAX_DESCRIPTION_BYTES) {
    throw invalidArgument(`description is ${bytes} bytes; at most ${MAX_DESCRIPTION_BYTES} (16 KiB) are allowed`, {
      field: "description",
      bytes,
      max: MAX_DESCRIPTION_BYTES,
    });
  }
  return description;
}

function checkWriteScopes(raw: readonly string[]): string[] {
  if (raw.length > MAX_WRITE_SCOPES_PER_TASK) {
    throw invalidArgument(`At most ${MAX_WRITE_SCOPES_PER_TASK} write scopes per task`, { field: "writeScopes" });
  }
  return normaliseWriteScopes(raw);
}

/** Task numbers of a dependency list: canonical ids, no duplicates. Existence is checked in the transaction. */
function checkDependencyList(ids: readonly string[]): number[] {
  if (ids.length > MAX_DEPENDENCIES_PER_TASK) {
    throw invalidArgument(`At most ${MAX_DEPENDENCIES_PER_TASK} dependencies per task`, { field: "blockedBy" });
  }
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) throw invalidArgument(`blockedBy lists ${id} twice`, { field: "blockedBy", taskId: id });
    seen.add(id);
  }
  return ids.map(requireTaskNumber);
}

const FIELDS_OF: Record<TaskAction, readonly (keyof UpdateTaskInput)[]> = {
  claim: [],
  release: [],
  edit: ["subject", "description", "writeScopes"],
  set_dependencies: ["blockedBy"],
  complete: [],
  reopen: [],
  reassign: ["owner"],
  delete: [],
};
const ACTION_FIELDS = ["subject", "description", "writeScopes", "blockedBy", "owner"] as const;

type Change =
  | { action: "claim" | "release" | "complete" | "reopen" | "delete" }
  | { action: "edit"; subject?: string; description?: string; writeScopes?: string[] }
  | { action: "set_dependencies"; blockedBy: number[] }
  | { action: "reassign"; owner: string | null };

function prepareChange(input: UpdateTaskInput): Change {
  const allowed = FIELDS_OF[input.action];
  for (const field of ACTION_FIELDS) {
    if (input[field] !== undefined && input[field] !== null && !allowed.includes(field)) {
      throw invalidArgument(
        `Action ${input.action} takes ${allowed.length ? allowed.join(", ") : "no fields"}, not ${field}`,
        { action: input.action, field },
      );
    }
  }
  switch (input.action) {
    case "edit": {
      if (input.subject === undefined && input.description === undefined && input.writeScopes === undefined) {
        throw invalidArgument("edit needs at least one of subject, description, writeScopes", { action: "edit" });
      }
      return {
        action: "edit",
        subject: input.subject === undefined ? undefined : checkSubject(input.subject),
        description: input.description === undefined ? undefined : checkDescription(input.description),
        writeScopes: input.writeScopes === undefined ? undefined : checkWriteScopes(input.writeScopes),
      };
    }
    case "set_dependencies":
      if (input.blockedBy === undefined) {
        throw invalidArgument("set_dependencies needs blockedBy (the new list; [] clears it)", {
          action: "set_dependencies",
        });
      }
      return { action: "set_dependencies", blockedBy: checkDependencyList(input.blockedBy) };
    case "reassign": {
      const owner = input.owner?.trim() ?? "";
      return { action: "reassign", owner: owner === "" ? null : owner };
    }
    default:
      return { action: input.action };
  }
}

// ---------------------------------------------------------------------------------------
// Transaction helpers

const TeamLockRows = z.array(z.object({ next_task_number: z.number().int() }));

/** Locks the team row for the rest of the transaction; returns the next task number. */
async function lockTeam(tx: Tx, teamId: string): Promise<number> {
  const rows = TeamLockRows.parse(
    await tx.$queryRaw`SELECT next_task_number FROM teams WHERE id = ${teamId} FOR UPDATE`,
  );
  const row = rows[0];
  if (!row) throw new AppError("TEAM_NOT_MEMBER", `Team ${teamId} does not exist`, { teamId });
  return row.next_task_number;
}

async function assertActor(tx: Tx, teamId: string, actor: Actor): Promise<void> {
  const notMember = () =>
    new AppError("TEAM_NOT_MEMBER", `${actor.name} (${actor.sessionId}) is not a member of team ${teamId}`, {
      teamId,
      sessionId: actor.sessionId,
      name: actor.name,
    });
  if (actor.isLead) {
    if (actor.sessionId !== teamId || actor.name !== LEAD_NAME) throw notMember();
    return;
  }
  if (actor.sessionId === teamId || actor.name === LEAD_NAME) throw notMember();
  const member = await tx.teamMember.findUnique({
    where: { teamId_name: { teamId, name: actor.name } },
    select: { sessionId: true },
  });
  if (member?.sessionId !== actor.sessionId) throw notMember();
}

async function ownerNameOf(db: DbOrTx, teamId: string, sessionId: string | null): Promise<string | null> {
  if (sessionId === null) return null;
  if (sessionId === teamId) return LEAD_NAME;
  const s = await db.session.findUnique({ where: { id: sessionId }, select: { memberName: true } });
  return s?.memberName ?? null;
}

/** Dependencies must name existing, non-deleted tasks of this team. */
async function checkDependenciesExist(tx: Tx, teamId: string, numbers: number[]): Promise<void> {
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
async function checkAcyclic(tx: Tx, teamId: string, number: number, deps: number[]): Promise<void> {
  const cycleError = (path: number[]) => {
    const cycle = path.map(formatTaskId);
    return new AppError(
      "TEAM_TASK_DEPENDENCY_CYCLE",
      `These dependencies would form a cycle: ${cycle.join(" → ")} (each task waits for the next)`,
      { taskId: formatTaskId(number), cycle },
    );
  };
  if (deps.includes(number)) throw cycleError([number, number]);
  const rows = await tx.teamTask.findMany({
    where: { teamId, status: { not: "deleted" } },
    select: { number: true, blockedBy: true },
  });
  const edges = new Map<number, number[]>(
    rows.map((r) => [r.number, r.blockedBy.map(parseTaskId).filter((n): n is number => n !== null)]),
  );
  edges.set(number, deps);
  // Depth-first from the new blockers: reaching `number` again closes a cycle.
  const via = new Map<number, number>(deps.map((d) => [d, number]));
  const stack = [...deps];
  while (stack.length > 0) {
    const n = stack.pop()!;
    for (const m of edges.get(n) ?? []) {
      if (m === number) {
        const back = [number, n];
        for (let cur = via.get(n)!; cur !== number; cur = via.get(cur)!) back.push(cur);
        back.push(number);
        throw cycleError(back.reverse());
      }
      if (!via.has(m)) {
        via.set(m, n);
        stack.push(m);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Views

async function toViews(db: DbOrTx, teamId: string, rows: TeamTask[]): Promise<TaskView[]> {
  if (rows.length === 0) return [];
  const blockerNumbers = [
    ...new Set(rows.flatMap((r) => r.blockedBy.map(parseTaskId).filter((n): n is number => n !== null))),
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
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
    });
  });
}

async function toView(db: DbOrTx, teamId: string, row: TeamTask): Promise<TaskView> {
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
 * `owner` is a member name, `lead` or `unowned`; `ready` keeps only (non-)ready tasks.
 */
export async function listTasks(db: DbOrTx, teamId: string, input: ListTasksInput = {}): Promise<TaskPage> {
  const q = parseInput(ListTasksInputSchema, input);
  const limit = q.limit ?? DEFAULT_LIST_LIMIT;
  const conds: Prisma.Sql[] = [Prisma.sql`t.team_id = ${teamId}`];
  conds.push(q.status === undefined ? Prisma.sql`t.status <> 'deleted'` : Prisma.sql`t.status = ${q.status}`);

  if (q.owner !== undefined) {
    const owner = q.owner.trim();
    if (owner === "unowned") conds.push(Prisma.sql`t.owner_session_id IS NULL`);
    else if (owner === LEAD_NAME) conds.push(Prisma.sql`t.owner_session_id = ${teamId}`);
    else {
      const member = await db.teamMember.findUnique({
        where: { teamId_name: { teamId, name: owner } },
        select: { sessionId: true },
      });
      if (!member) {
        throw new AppError("TEAM_MEMBER_NOT_FOUND", `No member named ${JSON.stringify(owner)} in this team`, {
          name: owner,
        });
      }
      conds.push(Prisma.sql`t.owner_session_id = ${member.sessionId}`);
    }
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

// ---------------------------------------------------------------------------------------
// Mutations

/** Any member adds a pending task at revision 1 with the next never-used id. */
export async function createTask(
  db: DbOrTx,
  teamId: string,
  actor: Actor,
  input: CreateTaskInput,
  limits: Partial<TaskBoardLimits> = {},
): Promise<TaskView> {
  const parsed = parseInput(CreateTaskInputSchema, input);
  const subject = checkSubject(parsed.subject);
  const description = checkDescription(parsed.description);
  const blockedBy = checkDependencyList(parsed.blockedBy ?? []);
  const writeScopes = checkWriteScopes(parsed.writeScopes ?? []);
  const maxTasks = limits.maxTasks ?? DEFAULT_MAX_TASKS;

  return inTx(db, async (tx) => {
    const number = await lockTeam(tx, teamId);
    await assertActor(tx, teamId, actor);
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
      },
    });
    await notifyActivity(tx, teamId, "state");
    return toView(tx, teamId, row);
  });
}

/**
 * One action on one task, compare-and-set on `expectedRevision`. Success bumps the revision
 * by exactly one and refreshes updated_at.
 */
export async function updateTask(db: DbOrTx, teamId: string, actor: Actor, input: UpdateTaskInput): Promise<TaskView> {
  const parsed = parseInput(UpdateTaskInputSchema, input);
  const number = requireTaskNumber(parsed.taskId);
  const change = prepareChange(parsed);
  const taskId = formatTaskId(number);

  return inTx(db, async (tx) => {
    await lockTeam(tx, teamId);
    await assertActor(tx, teamId, actor);
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

    const data = await decide(tx, teamId, actor, task, change);
    const row = await tx.teamTask.update({
      where: { teamId_number: { teamId, number }, revision: task.revision },
      data: { ...data, revision: { increment: 1 }, updatedAt: new Date() },
    });
    await notifyActivity(tx, teamId, "state");
    return toView(tx, teamId, row);
  });
}

type TaskPatch = Pick<Prisma.TeamTaskUpdateInput, "status" | "ownerSessionId" | "subject" | "description" | "blockedBy" | "writeScopes">;

/** Authority and precondition of one action against the current (locked) task; the patch to write. */
async function decide(tx: Tx, teamId: string, actor: Actor, task: TeamTask, change: Change): Promise<TaskPatch> {
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
    const numbers = task.blockedBy.map(parseTaskId).filter((n): n is number => n !== null);
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
      const ownerSessionId = await resolveAssignee(tx, teamId, change.owner);
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

/** `lead` or an active teammate's name → the session that will own the task. */
async function resolveAssignee(tx: Tx, teamId: string, name: string): Promise<string> {
  if (name === LEAD_NAME) return teamId;
  const member = await tx.teamMember.findUnique({
    where: { teamId_name: { teamId, name } },
    select: { sessionId: true, phase: true },
  });
  if (!member) {
    throw new AppError("TEAM_MEMBER_NOT_FOUND", `No member named ${JSON.stringify(name)} in this team`, { name });
  }
  if (member.phase !== "active") {
    throw new AppError("TEAM_INVALID_TARGET", `${name} is ${member.phase}, not active; tasks go to active members`, {
      name,
      phase: member.phase,
    });
  }
  return member.sessionId;
}
