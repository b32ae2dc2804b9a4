import { z } from "zod";
import type { Db } from "../db/client";
import { isTransientDbError } from "../db/errors";
import { AppError } from "../errors";
import { int4 } from "../input-guard";
import type { SessionId } from "../ids";
import type { ActivityHub } from "../live/activity";
import { requestAbort } from "../runtime/sessions";
import { defineTool, type ToolDefinition, type ToolsetOptions } from "../runtime/tools";
import { sendMessage, sendResultOfToolCall, type MailboxLimits } from "./mailbox";
import { LEAD_NAME } from "./names";
import {
  assertActiveMember,
  completeProvisioning,
  listMembers,
  memberByToolCall,
  membershipOf,
  provisionOrReport,
  reserveTeammate,
  resolveTarget,
  type MemberView,
  type RosterLimits,
} from "./roster";
import { createTask, getTask, listTasks, TaskViewSchema, updateTask, type TaskView } from "./task-board";

// The nine Team tools: the same list, byte for byte, for every member. Who is calling comes
// from the session running the tool, never from model input. Errors are AppErrors with TEAM_*
// codes, which the runtime returns to the model as tool errors.
//
// Effectively once (runtime/tools.ts): task create/update and interrupt commit their effect
// with their result (`ctx.commit`); spawn_teammate and send_message store the call key with
// their first durable row and `recover` from it.

export const TEAM_TOOLSET_OPTIONS: ToolsetOptions = { invalidInputCode: "TEAM_INVALID_ARGUMENT" };

export interface TeamToolDeps {
  hub: ActivityHub;
  roster?: RosterLimits;
  mailbox?: MailboxLimits;
  maxTasks?: number;
}

const CompactMember = z.object({
  name: z.string(),
  role: z.enum(["lead", "teammate"]),
  status: z.string(),
  description: z.string(),
  context: z.enum(["fresh", "fork"]).nullable(),
  diagnostic: z.string().nullable(),
});

function compactMember(m: MemberView): z.infer<typeof CompactMember> {
  return { name: m.name, role: m.role, status: m.status, description: m.description, context: m.context, diagnostic: m.diagnostic };
}

const CompactTask = TaskViewSchema.omit({ createdAt: true, updatedAt: true });
function compactTask(t: TaskView): z.infer<typeof CompactTask> {
  return CompactTask.parse(t);
}

const TaskId = z.string().regex(/^task-\d+$/, "a task id like task-1");

export function createTeamTools(deps: TeamToolDeps): ToolDefinition[] {
  const spawn = defineTool({
    name: "spawn_teammate",
    description:
      "Lead only. Creates a teammate with a unique kebab-case name and gives it its first task (prompt). context: fresh (empty history) or fork (starts with your completed turns).",
    input: z
      .object({
        name: z.string(),
        description: z.string().min(1).max(500),
        prompt: z.string().min(1).max(65_536),
        context: z.enum(["fresh", "fork"]).default("fresh"),
      })
      .strict(),
    output: CompactMember,
    async execute(input, ctx) {
      const me = await membershipOf(ctx.db, ctx.sessionId);
      const name = await reserveTeammate(ctx.db, me, input, deps.roster, { callKey: ctx.callKey, fence: ctx.fence });
      await ctx.effectCommitted();
      try {
        // Finishing the spawn and reporting it are one transaction.
        const complete = () => ctx.commit((tx) => completeProvisioning(tx, me.teamId, name));
        return compactMember(await provisionOrReport(ctx.db, me.teamId, name, complete));
      } catch (e) {
        // The database went away mid-spawn: the member stays provisioning and recovery
        // finishes it; say so rather than "failed".
        if (!isTransientDbError(e)) throw e;
        const view = (await listMembers(ctx.db, me.teamId)).find((m) => m.name === name);
        if (!view) throw e;
        return { ...compactMember(view), diagnostic: "Provisioning was cut short; it finishes automatically." };
      }
    },
    async recover(callKey, scope) {
      const member = await memberByToolCall(scope.db, callKey);
      if (!member) return null;
      const view = await provisionOrReport(scope.db, member.teamId, member.name, () =>
        completeProvisioning(scope.db, member.teamId, member.name),
      );
      return compactMember(view);
    },
  });

  const send = defineTool({
    name: "send_message",
    description:
      "Sends a message to a teammate by name, or to `lead`. It reaches a running agent at its next step, starts an idle one and resumes an inactive one. accepted: it is in their inbox; queued: it will be delivered. Either way it is durable: never resend.",
    input: z.object({ target: z.string().min(1).max(64), message: z.string().min(1) }).strict(),
    output: z.object({ messageId: z.string(), status: z.enum(["accepted", "queued"]) }),
    async execute({ target, message }, ctx) {
      const me = await membershipOf(ctx.db, ctx.sessionId);
      await assertActiveMember(ctx.db, me);
      if (target === me.name) throw new AppError("TEAM_SELF_MESSAGE", "You cannot message yourself");
      const to = await resolveTarget(ctx.db, me.teamId, target);
      return sendMessage(
        ctx.db,
        { teamId: me.teamId, sender: { sessionId: me.sessionId, name: me.name }, target: to, content: message, toolCallKey: ctx.callKey, fence: ctx.fence },
        { ...deps.mailbox, afterQueued: () => ctx.effectCommitted() },
      );
    },
    recover: (callKey, scope) => sendResultOfToolCall(scope.db, callKey, deps.mailbox),
  });

  const list = defineTool({
    name: "list_agents",
    description: "Lists the team: the Lead first, then teammates in creation order, with live status.",
    input: z.object({}).strict(),
    output: z.object({ agents: z.array(CompactMember) }),
    async execute(_input, ctx) {
      const me = await membershipOf(ctx.db, ctx.sessionId);
      return { agents: (await listMembers(ctx.db, me.teamId)).map(compactMember) };
    },
  });

  const wait = defineTool({
    name: "wait_agent",
    description:
      "Waits until something changes in the team after this call (a message, a task update, a member status change) or the timeout passes, then re-read what you need. Returns noProgress at once when no other member is working.",
    input: z.object({ timeout_ms: z.number().int().optional() }).strict(),
    output: z.union([z.object({ timedOut: z.boolean() }), z.object({ noProgress: z.literal(true), hint: z.string() })]),
    async execute({ timeout_ms = 30_000 }, ctx) {
      if (timeout_ms < 10_000 || timeout_ms > 3_600_000) {
        throw new AppError("TEAM_INVALID_TIMEOUT", "timeout_ms must be between 10000 and 3600000");
      }
      const me = await membershipOf(ctx.db, ctx.sessionId);
      const members = await listMembers(ctx.db, me.teamId);
      // Subscribe before checking, so a change between the check and the wait is not missed.
      let fired = false;
      let wake: () => void = () => undefined;
      // Status changes and arriving input of any member; task and mailbox changes are
      // announced on the team id (the Lead's session). Log appends ("event") do not count.
      const offs = members.map((m) =>
        deps.hub.on(m.sessionId, (a) => {
          if (a.kind !== "state" && a.kind !== "inbox") return;
          fired = true;
          wake();
        }),
      );
      try {
        if (!(await othersMakingProgress(ctx.db, me.teamId, me.sessionId))) {
          return {
            noProgress: true as const,
            hint: "No other member is running. Use list_agents, then send_message to wake an inactive teammate, or finish.",
          };
        }
        const woke = await new Promise<boolean>((resolve, reject) => {
          const aborted = () => new AppError("TEAM_WAIT_ABORTED", "The wait was aborted");
          // An abort that came before this point fires no event: check it, or the wait would
          // run its whole timeout (and hold up a shutdown).
          if (ctx.signal.aborted) return reject(aborted());
          if (fired) return resolve(true);
          const timer = setTimeout(() => {
            ctx.signal.removeEventListener("abort", onAbort);
            resolve(false);
          }, timeout_ms);
          const onAbort = () => {
            clearTimeout(timer);
            reject(aborted());
          };
          ctx.signal.addEventListener("abort", onAbort, { once: true });
          wake = () => {
            clearTimeout(timer);
            ctx.signal.removeEventListener("abort", onAbort);
            resolve(true);
          };
        });
        return { timedOut: !woke };
      } finally {
        for (const off of offs) off();
      }
    },
  });

  const interrupt = defineTool({
    name: "interrupt_agent",
    description:
      "Lead only. Cancels a teammate's current turn. Its pending messages stay parked until its next message arrives.",
    input: z.object({ target: z.string().min(1).max(64) }).strict(),
    output: z.object({ previousStatus: z.string() }),
    async execute({ target }, ctx) {
      const me = await membershipOf(ctx.db, ctx.sessionId);
      if (!me.isLead) throw new AppError("TEAM_LEAD_REQUIRED", "Only the Lead can interrupt teammates");
      if (target === LEAD_NAME) throw new AppError("TEAM_INVALID_TARGET", "interrupt_agent takes a teammate, not the Lead");
      const to = await resolveTarget(ctx.db, me.teamId, target);
      return ctx.commit(async (tx) => {
        const previous = (await listMembers(tx, me.teamId)).find((m) => m.name === target);
        await requestAbort(tx, to.sessionId, "interrupt");
        return { previousStatus: previous?.status ?? "inactive" };
      });
    },
  });

  const taskCreate = defineTool({
    name: "team_task_create",
    description: "Creates a task on the team board. Use disjoint write_scopes (path prefixes) for parallel work.",
    input: z
      .object({
        subject: z.string(),
        description: z.string(),
        blocked_by: z.array(TaskId).optional(),
        write_scopes: z.array(z.string()).optional(),
      })
      .strict(),
    output: CompactTask,
    async execute(input, ctx) {
      const me = await membershipOf(ctx.db, ctx.sessionId);
      return ctx.commit(async (tx) =>
        compactTask(
          await createTask(
            tx,
            me.teamId,
            { sessionId: me.sessionId, name: me.name, isLead: me.isLead },
            { subject: input.subject, description: input.description, blockedBy: input.blocked_by, writeScopes: input.write_scopes },
            deps.maxTasks === undefined ? undefined : { maxTasks: deps.maxTasks },
          ),
        ),
      );
    },
  });

  const taskList = defineTool({
    name: "team_task_list",
    description: "Lists tasks on the board, filtered by status, owner (a name or `unowned`) or readiness.",
    input: z
      .object({
        status: z.enum(["pending", "in_progress", "completed", "deleted"]).optional(),
        owner: z.string().min(1).max(64).optional(),
        ready: z.boolean().optional(),
        cursor: z.string().optional(),
        limit: z.number().int().min(1).max(100).optional(),
      })
      .strict(),
    output: z.object({ tasks: z.array(CompactTask), nextCursor: z.string().optional() }),
    async execute(input, ctx) {
      const me = await membershipOf(ctx.db, ctx.sessionId);
      const page = await listTasks(ctx.db, me.teamId, input);
      return { tasks: page.tasks.map(compactTask), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
    },
  });

  const taskGet = defineTool({
    name: "team_task_get",
    description: "Reads one task (deleted tasks too).",
    input: z.object({ task_id: TaskId }).strict(),
    output: CompactTask,
    async execute({ task_id }, ctx) {
      const me = await membershipOf(ctx.db, ctx.sessionId);
      return compactTask(await getTask(ctx.db, me.teamId, task_id));
    },
  });

  const taskUpdate = defineTool({
    name: "team_task_update",
    description:
      "Changes a task. Send the revision you last saw as expected_revision; on TEAM_TASK_STALE_REVISION re-read the task and decide again. Actions: claim, release, edit (subject/description/write_scopes), set_dependencies (blocked_by), complete, reopen, reassign (Lead; owner), delete.",
    input: z
      .object({
        task_id: TaskId,
        expected_revision: int4(1),
        action: z.enum(["claim", "release", "edit", "set_dependencies", "complete", "reopen", "reassign", "delete"]),
        subject: z.string().optional(),
        description: z.string().optional(),
        write_scopes: z.array(z.string()).optional(),
        blocked_by: z.array(TaskId).optional(),
        owner: z.string().max(64).optional(),
      })
      .strict(),
    output: CompactTask,
    async execute(input, ctx) {
      const me = await membershipOf(ctx.db, ctx.sessionId);
      const actor = { sessionId: me.sessionId, name: me.name, isLead: me.isLead };
      return ctx.commit(async (tx) =>
        compactTask(
          await updateTask(tx, me.teamId, actor, {
            taskId: input.task_id,
            expectedRevision: input.expected_revision,
            action: input.action,
            subject: input.subject,
            description: input.description,
            writeScopes: input.write_scopes,
            blockedBy: input.blocked_by,
            owner: input.owner,
          }),
        ),
      );
    },
  });

  return [spawn, send, list, wait, interrupt, taskCreate, taskList, taskGet, taskUpdate];
}

/**
 * Another member can still change something: it runs a turn, has input waiting (it will wake
 * or cold-resume), or is being provisioned.
 */
async function othersMakingProgress(db: Db, teamId: SessionId, me: SessionId): Promise<boolean> {
  const rows = z.array(z.object({ n: z.number() })).parse(
    await db.$queryRaw`SELECT count(*)::int AS n FROM sessions s
      WHERE s.team_id = ${teamId} AND s.id <> ${me}
        AND (s.active_turn_id IS NOT NULL
             OR (NOT s.parked AND EXISTS (SELECT 1 FROM inbox_items i WHERE i.session_id = s.id)))`,
  );
  const provisioning = await db.teamMember.count({ where: { teamId, phase: "provisioning" } });
  return (rows[0]?.n ?? 0) > 0 || provisioning > 0;
}
