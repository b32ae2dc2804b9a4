import { z } from "zod";
import { asSessionId } from "../../ids";
import { int4 } from "../../../shared/input-guard";
import { stopTeam } from "../../team/team-stop";
import { teamReader } from "../../live/feed-readers";
import { TEAM_FEED_REREAD_MS, TeamFeedEventId } from "../../live/team-feed";
import { listMessages, TeamMessageViewSchema } from "../../team/mailbox";
import { teamLimitsOf } from "../../env";
import { LIMITS } from "../../../shared/limits";
import { BudgetViewSchema, setBudget } from "../../team/budget";
import { BudgetInputSchema, costNanosOf } from "../../../shared/budget-input";
import { leadOf } from "../../members/membership";
import { availableModels } from "../../models/registry";
import { listMembers, listTeams, MemberViewSchema, TeamSummarySchema } from "../../team/roster";
import { spawnTeammate, SpawnInputSchema } from "../../team/provisioning";
import {
  getTask,
  ListTasksInputSchema,
  listTasks,
  TaskPageSchema,
  TaskViewSchema,
  updateTask,
  UpdateTaskRequestSchema,
} from "../../team/task-board";
import { PresenceClientId } from "../../team/presence";
import { feedAccess, teamAccess } from "../access";
import { personProcedure, router } from "../init";
import { liveFeed } from "../live-feed";
import { ListInput, TeamRef } from "../schemas";
import { TaskIdSchema } from "../../task-ids";

// The team room's API. Every procedure checks the person's role in the team first
// (trpc/access.ts); a person who acts does so with Lead authority: the tools' rules apply, the
// board records the person, and task updates carry the revision the person saw (a stale one
// is a CONFLICT).

export { TeamStateSchema, type TeamState, type TeamMessage } from "../../live/team-feed";

export const teamRouter = router({
  /** The teams the person belongs to, with their role in each. */
  list: personProcedure
    .input(ListInput)
    .output(z.array(TeamSummarySchema))
    .query(({ ctx, input }) => listTeams(ctx.db, { limit: input?.limit, userId: ctx.person.id })),

  roster: personProcedure
    .input(TeamRef)
    .output(z.array(MemberViewSchema))
    .query(async ({ ctx, input }) => listMembers(ctx.db.sql, (await teamAccess(ctx, input.teamId, "view")).teamId)),

  addTeammate: personProcedure
    .input(
      // A name is checked by the roster (TEAM_INVALID_MEMBER_NAME); here only its size.
      TeamRef.extend(SpawnInputSchema.shape).extend({ name: z.string().min(1).max(LIMITS.memberNameChars) }),
    )
    .output(MemberViewSchema)
    .mutation(async ({ ctx, input }) => {
      const by = await teamAccess(ctx, input.teamId, "act");
      const member = await spawnTeammate(ctx.db, leadOf(by.teamId), input, { limits: teamLimitsOf(ctx.env), models: availableModels(ctx.env), by });
      void ctx.runtime.wake(asSessionId(member.sessionId));
      return member;
    }),

  /**
   * Sets the team budget (owners and members): tokens and/or cost in USD, null for no limit of
   * that kind. Above the spend, stopped members resume.
   */
  setBudget: personProcedure
    .input(TeamRef.extend(BudgetInputSchema.shape))
    .output(BudgetViewSchema)
    .mutation(async ({ ctx, input }) => {
      const by = await teamAccess(ctx, input.teamId, "act");
      return setBudget(ctx.db, by, { tokens: input.tokens, costNanos: costNanosOf(input.costUsd) });
    }),

  /**
   * Stops every working member at once (their turns end as a Stop ends them) and parks every
   * inbox: queued prompts and mail stay, and nothing runs until a new prompt. Attributed.
   */
  stop: personProcedure
    .input(TeamRef)
    .output(z.object({ stopped: z.array(z.string()) }))
    .mutation(async ({ ctx, input }) => stopTeam(ctx.db, await teamAccess(ctx, input.teamId, "act"))),

  tasks: personProcedure
    .input(TeamRef.extend(ListTasksInputSchema.shape))
    .output(TaskPageSchema)
    .query(async ({ ctx, input }) => {
      const { teamId: id, ...filters } = input;
      return listTasks(ctx.db, (await teamAccess(ctx, id, "view")).teamId, filters);
    }),

  task: personProcedure
    .input(TeamRef.extend({ taskId: TaskIdSchema }))
    .output(TaskViewSchema)
    .query(async ({ ctx, input }) => getTask(ctx.db, (await teamAccess(ctx, input.teamId, "view")).teamId, input.taskId)),

  updateTask: personProcedure
    .input(TeamRef.extend(UpdateTaskRequestSchema.shape))
    .output(TaskViewSchema)
    .mutation(async ({ ctx, input }) => {
      const { teamId: id, ...update } = input;
      const by = await teamAccess(ctx, id, "act");
      return updateTask(ctx.db, leadOf(by.teamId), update, by);
    }),

  messages: personProcedure
    .input(TeamRef.extend({ afterSeq: int4().optional(), limit: z.number().int().min(1).max(LIMITS.messageListMax).optional() }))
    .output(z.array(TeamMessageViewSchema))
    .query(async ({ ctx, input }) =>
      listMessages(ctx.db, (await teamAccess(ctx, input.teamId, "view")).teamId, { afterSeq: input.afterSeq, limit: input.limit }),
    ),

  /**
   * Live team state: roster, board, mailbox and people. The first message is the whole state,
   * later ones patches with only what changed (shared/team-delta.ts), all read once per change
   * for every feed of the team in this process (live/team-feed.ts). A reconnect with an id of
   * the same reader gets only the changes since; any other id gets the whole state again.
   * `clientId` names the browser tab: its presence leaves when the feed closes.
   */
  live: personProcedure
    .input(TeamRef.extend({ lastEventId: TeamFeedEventId.nullish(), clientId: PresenceClientId.optional() }))
    .subscription(async ({ ctx, input, signal }) => {
      const id = (await teamAccess(ctx, input.teamId, "view")).teamId;
      const access = async () => (await feedAccess(ctx, (db) => teamAccess(ctx, id, "view", db))).role;
      const open = () => teamReader(ctx, id, input.lastEventId ?? null, { userId: ctx.person.id, clientId: input.clientId ?? null });
      return liveFeed(ctx, { teamId: null, access, open, signal, recheckMs: TEAM_FEED_REREAD_MS });
    }),
});
