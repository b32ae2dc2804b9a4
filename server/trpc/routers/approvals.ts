import { z } from "zod";
import { AppError } from "../../errors";
import { LIMITS } from "../../../shared/limits";
import { answerQuestion, decideApproval, pendingRequests, WaitingViewSchema } from "../../team/approvals";
import { approvalExpiryOf, setApprovalExpiry, setToolMode, ToolModeSchema, toolPolicyOf } from "../../team/tool-policy";
import { teamAccess } from "../access";
import { personProcedure, router } from "../init";
import { TeamRef } from "../schemas";
import { decidePlan, pendingPlans, planApprovalOf, PlanViewSchema, setPlanApproval } from "../../team/plans";

// People in control (SPEC.md §17): what waits for people in a team, deciding and answering it,
// and the team's tool policy. Members and owners decide and answer; viewers see; owners set
// the policy (and "always allow", which sets it).

const ApprovalRef = TeamRef.extend({ approvalId: z.string().min(1).max(64) });
const Ok = z.object({ ok: z.literal(true) });

export const approvalsRouter = router({
  pending: personProcedure
    .input(TeamRef)
    .output(z.array(WaitingViewSchema))
    .query(async ({ ctx, input }) => pendingRequests(ctx.db.sql, (await teamAccess(ctx, input.teamId, "view")).teamId)),

  /** Approve or deny a waiting tool call; the first decision wins (APPROVAL_NOT_PENDING after). */
  decide: personProcedure
    .input(ApprovalRef.extend({ approve: z.boolean(), note: z.string().trim().max(LIMITS.decisionNoteChars).optional(), alwaysAllow: z.boolean().optional() }))
    .output(Ok)
    .mutation(async ({ ctx, input }) => {
      const by = await teamAccess(ctx, input.teamId, input.alwaysAllow ? "own" : "act");
      if (input.alwaysAllow && !input.approve) throw new AppError("INVALID_INPUT", "Always allow goes with an approval");
      await decideApproval(ctx.db, by, input.approvalId, { approve: input.approve, note: input.note || null, alwaysAllow: input.alwaysAllow ?? false });
      return { ok: true as const };
    }),

  /** Answer a waiting question (the agent reads the answer and the person's name). */
  answer: personProcedure
    .input(ApprovalRef.extend({ answer: z.string().trim().min(1).max(LIMITS.answerChars) }))
    .output(Ok)
    .mutation(async ({ ctx, input }) => {
      await answerQuestion(ctx.db, await teamAccess(ctx, input.teamId, "act"), input.approvalId, input.answer);
      return { ok: true as const };
    }),

  /** Every tool of the team's list with its mode, and how long requests wait before they expire. */
  policy: personProcedure
    .input(TeamRef)
    .output(
      z.object({ tools: z.array(z.object({ tool: z.string(), mode: ToolModeSchema })), expiryMinutes: z.number().int().nullable(), planApproval: z.boolean() }),
    )
    .query(async ({ ctx, input }) => {
      const { teamId } = await teamAccess(ctx, input.teamId, "view");
      return {
        tools: await toolPolicyOf(ctx.db.sql, teamId, await ctx.runtime.toolCatalog(teamId)),
        expiryMinutes: await approvalExpiryOf(ctx.db.sql, teamId),
        planApproval: await planApprovalOf(ctx.db, teamId),
      };
    }),

  /** The Lead's plans waiting for a person (plan approval on), each with its tasks. */
  plans: personProcedure
    .input(TeamRef)
    .output(z.array(PlanViewSchema))
    .query(async ({ ctx, input }) => pendingPlans(ctx.db, (await teamAccess(ctx, input.teamId, "view")).teamId)),

  /** Approve a plan (its tasks may start) or send it back with a note for the Lead; the first decision wins. */
  decidePlan: personProcedure
    .input(
      TeamRef.extend({
        planId: z.string().min(1).max(64),
        approve: z.boolean(),
        note: z.string().trim().max(LIMITS.decisionNoteChars).optional(),
        /** The tasks the person read, with their revisions: a plan that changed since is refused. */
        seen: z.array(z.object({ id: z.string().max(32), revision: z.number().int().min(1).max(2 ** 31 - 1) })).max(LIMITS.maxTasksPerPlanView).optional(),
      }),
    )
    .output(Ok)
    .mutation(async ({ ctx, input }) => {
      await decidePlan(ctx.db, await teamAccess(ctx, input.teamId, "act"), input.planId, { approve: input.approve, note: input.note || null, seen: input.seen });
      return { ok: true as const };
    }),

  /** Owners: the tasks the Lead creates wait as a plan for a person's approval, or not. */
  setPlanApproval: personProcedure
    .input(TeamRef.extend({ on: z.boolean() }))
    .output(Ok)
    .mutation(async ({ ctx, input }) => {
      await setPlanApproval(ctx.db, await teamAccess(ctx, input.teamId, "own"), input.on);
      return { ok: true as const };
    }),

  /** Pending requests older than this end as expired, which the agent reads as a refusal (null: never). */
  setExpiry: personProcedure
    .input(TeamRef.extend({ minutes: z.number().int().min(1).max(LIMITS.approvalExpiryMaxMinutes).nullable() }))
    .output(Ok)
    .mutation(async ({ ctx, input }) => {
      await setApprovalExpiry(ctx.db, await teamAccess(ctx, input.teamId, "own"), input.minutes);
      return { ok: true as const };
    }),

  setPolicy: personProcedure
    .input(TeamRef.extend({ tool: z.string().min(1).max(LIMITS.toolNameChars), mode: ToolModeSchema }))
    .output(Ok)
    .mutation(async ({ ctx, input }) => {
      const by = await teamAccess(ctx, input.teamId, "own");
      await setToolMode(ctx.db, by, (await ctx.runtime.toolCatalog(by.teamId)).map((t) => t.name), input.tool, input.mode);
      return { ok: true as const };
    }),
});
