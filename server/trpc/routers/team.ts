import { createHash } from "node:crypto";
import { tracked } from "@trpc/server";
import { z } from "zod";
import { asSessionId, type SessionId } from "../../ids";
import { int4 } from "../../input-guard";
import { activityWaiter } from "../../live/activity";
import { listMessages, TeamMessageViewSchema, type TeamMessageView } from "../../team/mailbox";
import { teamLimitsOf } from "../../env";
import { LIMITS } from "../../limits";
import { budgetView, BudgetViewSchema, setBudget, teamBudgetLimit, type BudgetView } from "../../team/budget";
import { BudgetInputSchema, costNanosOf } from "../../team/budget-input";
import { leadOf } from "../../team/membership";
import { SpendSchema, type Spend } from "../../models/catalog";
import { availableModels } from "../../models/registry";
import { listMembers, listTeams, MemberViewSchema, spawnTeammate, SpawnInputSchema, teamSpend, TeamSummarySchema, type MemberView } from "../../team/roster";
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
import { recentActions, PersonActionViewSchema, type PersonActionView } from "../../people/actions";
import { leavePresence, listPresence, PresenceClientId, PresenceViewSchema, type PresenceView } from "../../people/presence";
import { TeamRoleSchema, type TeamRole } from "../../people/roles";
import { listPeople, TeamPersonViewSchema, type TeamPersonView } from "../../people/team-people";
import { workspaceSummary, WorkspaceSummarySchema, type WorkspaceSummary } from "../../workspace";
import { feedAccess, teamAccess } from "../access";
import { personProcedure, router, type PersonContext } from "../init";
import { ListInput, TeamRef } from "../schemas";

// The team room's API. Every procedure checks the person's role in the team first
// (trpc/access.ts); a person who acts does so with Lead authority: the tools' rules apply, the
// board records the person, and task updates carry the revision the person saw (a stale one
// is a CONFLICT).


export interface TeamState {
  members: MemberView[];
  /** The team's total: its members' spend summed. */
  spend: Spend;
  tasks: TaskView[];
  messages: TeamMessageView[];
  /** The people of the team, who of them is in the room now, and what people did lately. */
  people: TeamPersonView[];
  presence: PresenceView[];
  actions: PersonActionView[];
  /** The workspace's size and newest change: the Files view re-reads when it moves. */
  workspace: WorkspaceSummary;
  /** The team budget and spend: the room shows a stop and offers the raise. */
  budget: BudgetView;
  /** The viewer's own role: the room enables the controls it allows. */
  myRole: TeamRole;
}
export const TeamStateSchema = z.object({
  members: z.array(MemberViewSchema),
  spend: SpendSchema,
  tasks: z.array(TaskViewSchema),
  messages: z.array(TeamMessageViewSchema),
  people: z.array(TeamPersonViewSchema),
  presence: z.array(PresenceViewSchema),
  actions: z.array(PersonActionViewSchema),
  workspace: WorkspaceSummarySchema,
  budget: BudgetViewSchema,
  myRole: TeamRoleSchema,
});

/** Every task of the board, tombstones last. */
async function allTasks(ctx: PersonContext, id: SessionId): Promise<TaskView[]> {
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

/** The roster, the whole board, the first page of messages (the largest one) and the people. */
async function readTeamState(ctx: PersonContext, id: SessionId, myRole: TeamRole): Promise<TeamState> {
  const [members, tasks, messages, people, presence, actions, workspace, limit] = await Promise.all([
    listMembers(ctx.db, id),
    allTasks(ctx, id),
    listMessages(ctx.db, id, { limit: LIMITS.messageListMax }),
    listPeople(ctx.db, id, { role: myRole }),
    listPresence(ctx.db, id),
    recentActions(ctx.db, id),
    workspaceSummary(ctx.db, id),
    teamBudgetLimit(ctx.db, id),
  ]);
  const spend = teamSpend(members);
  return { members, spend, tasks, messages, people, presence, actions, workspace, budget: budgetView(limit, spend), myRole };
}

export const teamRouter = router({
  /** The teams the person belongs to, with their role in each. */
  list: personProcedure
    .input(ListInput)
    .output(z.array(TeamSummarySchema))
    .query(({ ctx, input }) => listTeams(ctx.db, { limit: input?.limit, userId: ctx.person.id })),

  roster: personProcedure
    .input(TeamRef)
    .output(z.array(MemberViewSchema))
    .query(async ({ ctx, input }) => listMembers(ctx.db, (await teamAccess(ctx, input.teamId, "view")).teamId)),

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
   * Live team state: roster, board, mailbox and people as one snapshot, sent whenever any of
   * them changes. The event id carries a digest of the snapshot: a reconnect with the last id
   * gets the state again only if it changed meanwhile, so nothing is missed and nothing is
   * doubled. `clientId` names the browser tab: its presence leaves when the feed closes.
   */
  live: personProcedure
    .input(TeamRef.extend({ lastEventId: z.string().max(80).nullish(), clientId: PresenceClientId.optional() }))
    .subscription(async ({ ctx, input, signal }) => {
      const id = (await teamAccess(ctx, input.teamId, "view")).teamId;
      return teamFeed(ctx, id, input.lastEventId ?? null, input.clientId ?? null, signal);
    }),
});

async function* teamFeed(ctx: PersonContext, id: SessionId, lastId: string | null, clientId: string | null, signal: AbortSignal | undefined) {
  // Ids are "<time>.<digest of the state>": unique, and a reconnect compares the digest.
  let lastDigest = lastId?.split(".")[1] ?? null;
  try {
    while (!signal?.aborted) {
      // Members' state and inbox changes; task, mailbox, people and file changes come on the team id.
      const members = await listMembers(ctx.db, id);
      const waiters = [
        activityWaiter(ctx.hub, id, ["state", "inbox", "people", "workspace", "spend"]),
        ...members.filter((m) => m.sessionId !== id).map((m) => activityWaiter(ctx.hub, m.sessionId, ["state", "inbox", "spend"])),
      ];
      try {
        // Re-checked on every read: a person removed from the team loses the feed at once.
        const { role } = await feedAccess(ctx, () => teamAccess(ctx, id, "view"));
        const state = await readTeamState(ctx, id, role);
        const digest = createHash("sha1").update(JSON.stringify(state)).digest("hex");
        if (digest !== lastDigest) {
          lastDigest = digest;
          yield tracked(`${Date.now().toString(36)}.${digest}`, state);
        }
        // The timeout also lets presence that outlived its TTL drop out.
        await Promise.race(waiters.map((w) => w.wait(5_000, signal)));
      } finally {
        for (const w of waiters) w.dispose();
      }
    }
  } finally {
    // The tab closed (or lost access): it leaves the room now rather than at its TTL.
    if (clientId) await leavePresence(ctx.db, id, ctx.person.id, clientId).catch(() => undefined);
  }
}
