import { createHash } from "node:crypto";
import { tracked } from "@trpc/server";
import { z } from "zod";
import { AppError, isAppError } from "../../errors";
import { asSessionId, type SessionId } from "../../ids";
import { int4 } from "../../input-guard";
import { activityWaiter } from "../../live/activity";
import { listMessages, TeamMessageViewSchema, type TeamMessageView } from "../../team/mailbox";
import { teamLimitsOf } from "../../env";
import { LIMITS } from "../../limits";
import { membershipOf, type Membership } from "../../team/membership";
import { listMembers, listTeams, MemberViewSchema, spawnTeammate, SpawnInputSchema, TeamSummarySchema, type MemberView } from "../../team/roster";
import {
  getTask,
  ListTasksInputSchema,
  listTasks,
  TaskIdSchema,
  TaskPageSchema,
  TaskViewSchema,
  updateTask,
  UpdateTaskRequestSchema,
  type TaskView,
} from "../../team/task-board";
import { publicProcedure, router, type TrpcContext } from "../init";
import { ListInput, SessionIdInput } from "../schemas";

// The team room's API. A human in the browser acts with Lead authority: the tools' rules
// apply, and task updates carry the revision the person saw (a stale one is a CONFLICT).

const teamId = SessionIdInput;
const TeamRef = z.object({ teamId });

/**
 * The human acts as the Lead of the team. The id must name a team (a Lead's session): a
 * teammate's session id is no team id, and never lends its team's Lead authority.
 */
async function humanAsLead(ctx: TrpcContext, id: SessionId): Promise<Membership> {
  const me = await membershipOf(ctx.db, id).catch((e: unknown) => {
    if (isAppError(e)) return null;
    throw e;
  });
  if (!me?.isLead) throw new AppError("TEAM_NOT_FOUND", `No team ${id}`, { teamId: id });
  return me;
}

export interface TeamState {
  members: MemberView[];
  tasks: TaskView[];
  messages: TeamMessageView[];
}

/** Every task of the board, tombstones last. */
async function allTasks(ctx: TrpcContext, id: SessionId): Promise<TaskView[]> {
  const out: TaskView[] = [];
  for (const status of [undefined, "deleted"] as const) {
    let cursor: string | undefined;
    do {
      const page = await listTasks(ctx.db, id, { status, cursor, limit: LIMITS.taskListMax });
      out.push(...page.tasks);
      cursor = page.nextCursor;
    } while (cursor);
  }
  return out;
}

/** The roster, the whole board and the first page of messages (the largest one). */
async function readTeamState(ctx: TrpcContext, id: SessionId): Promise<TeamState> {
  const [members, tasks, messages] = await Promise.all([
    listMembers(ctx.db, id),
    allTasks(ctx, id),
    listMessages(ctx.db, id, { limit: LIMITS.messageListMax }),
  ]);
  return { members, tasks, messages };
}

export const teamRouter = router({
  list: publicProcedure
    .input(ListInput)
    .output(z.array(TeamSummarySchema))
    .query(({ ctx, input }) => listTeams(ctx.db, input?.limit)),

  roster: publicProcedure
    .input(TeamRef)
    .output(z.array(MemberViewSchema))
    .query(async ({ ctx, input }) => listMembers(ctx.db, (await humanAsLead(ctx, input.teamId)).teamId)),

  addTeammate: publicProcedure
    .input(
      // A name is checked by the roster (TEAM_INVALID_MEMBER_NAME); here only its size.
      TeamRef.extend(SpawnInputSchema.shape).extend({ name: z.string().min(1).max(LIMITS.memberNameChars) }),
    )
    .output(MemberViewSchema)
    .mutation(async ({ ctx, input }) => {
      const lead = await humanAsLead(ctx, input.teamId);
      const member = await spawnTeammate(ctx.db, lead, input, teamLimitsOf(ctx.env));
      void ctx.runtime.wake(asSessionId(member.sessionId));
      return member;
    }),

  tasks: publicProcedure
    .input(TeamRef.extend(ListTasksInputSchema.shape))
    .output(TaskPageSchema)
    .query(async ({ ctx, input }) => {
      const { teamId: id, ...filters } = input;
      return listTasks(ctx.db, (await humanAsLead(ctx, id)).teamId, filters);
    }),

  task: publicProcedure
    .input(TeamRef.extend({ taskId: TaskIdSchema }))
    .output(TaskViewSchema)
    .query(async ({ ctx, input }) => getTask(ctx.db, (await humanAsLead(ctx, input.teamId)).teamId, input.taskId)),

  updateTask: publicProcedure
    .input(TeamRef.extend(UpdateTaskRequestSchema.shape))
    .output(TaskViewSchema)
    .mutation(async ({ ctx, input }) => {
      const { teamId: id, ...update } = input;
      const lead = await humanAsLead(ctx, id);
      return updateTask(ctx.db, lead, update);
    }),

  messages: publicProcedure
    .input(TeamRef.extend({ afterSeq: int4().optional(), limit: z.number().int().min(1).max(LIMITS.messageListMax).optional() }))
    .output(z.array(TeamMessageViewSchema))
    .query(async ({ ctx, input }) =>
      listMessages(ctx.db, (await humanAsLead(ctx, input.teamId)).teamId, { afterSeq: input.afterSeq, limit: input.limit }),
    ),

  /**
   * Live team state: roster, board and mailbox as one snapshot, sent whenever any of them
   * changes. The event id carries a digest of the snapshot: a reconnect with the last id gets
   * the state again only if it changed meanwhile, so nothing is missed and nothing is doubled.
   */
  live: publicProcedure
    .input(TeamRef.extend({ lastEventId: z.string().max(80).nullish() }))
    .subscription(async ({ ctx, input, signal }) => {
      const id = (await humanAsLead(ctx, input.teamId)).teamId;
      return teamFeed(ctx, id, input.lastEventId ?? null, signal);
    }),
});

async function* teamFeed(ctx: TrpcContext, id: SessionId, lastId: string | null, signal: AbortSignal | undefined) {
  // Ids are "<time>.<digest of the state>": unique, and a reconnect compares the digest.
  let lastDigest = lastId?.split(".")[1] ?? null;
  while (!signal?.aborted) {
    // Any member's state or inbox changes, and task/mailbox changes announced on the team id.
    const members = await listMembers(ctx.db, id);
    const waiters = members.map((m) => activityWaiter(ctx.hub, m.sessionId, ["state", "inbox"]));
    try {
      const state = await readTeamState(ctx, id);
      const digest = createHash("sha1").update(JSON.stringify(state)).digest("hex");
      if (digest !== lastDigest) {
        lastDigest = digest;
        yield tracked(`${Date.now().toString(36)}.${digest}`, state);
      }
      await Promise.race(waiters.map((w) => w.wait(5_000, signal)));
    } finally {
      for (const w of waiters) w.dispose();
    }
  }
}
