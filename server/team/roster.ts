import { z } from "zod";
import type { DbOrTx } from "../db/client";
import type { SqlRunner } from "../db/sql";
import { AppError } from "../errors";
import type { SessionId, UserId } from "../ids";
import { SpendSchema, sumSpend } from "../models/catalog";
import { ModelChoiceSchema } from "../models/choice";
import { TurnEndReasonSchema } from "../runtime/events";
import { AgentStatusSchema, deriveStatus, spendOf, SpendRowSchema, STATUS_COLUMNS, teamSpendSums } from "../runtime/sessions";
import { Prisma } from "../db/generated/client";
import { PersonRefSchema } from "../person-ref";
import { TeamRoleSchema } from "../people/roles";
import { LEAD_NAME } from "../members/names";

// The roster: who is in a team. The Lead is the pseudo-member `lead`; teammates are created
// by the Lead, go provisioning → active | failed, and their names are never reused.

export const MemberViewSchema = z.object({
  name: z.string(),
  role: z.enum(["lead", "teammate"]),
  sessionId: z.string(),
  description: z.string(),
  context: z.enum(["fresh", "fork"]).nullable(),
  phase: z.enum(["provisioning", "active", "failed"]),
  status: AgentStatusSchema,
  diagnostic: z.string().nullable(),
  model: ModelChoiceSchema,
  /** What the member's session has spent (its counters, updated at every step). */
  spend: SpendSchema,
  /** The person who added the teammate from the room (null: the Lead spawned it). */
  addedBy: PersonRefSchema.nullable(),
  /** Why the member's last turn failed (its turn_end `error`); null once a later turn ends otherwise. */
  lastError: z.string().nullable(),
  /** How the member's last turn ended (null before its first): the room tells a stopped agent from an idle one. */
  lastTurnEnd: TurnEndReasonSchema.nullable(),
});
export type MemberView = z.infer<typeof MemberViewSchema>;

/** The team's spend: what its members' sessions spent (a member not yet created spent nothing). */
export function teamSpend(members: readonly MemberView[]) {
  return sumSpend(members.map((m) => m.spend));
}

/** A roster row: the member (all null for the Lead), its session (null until created) and its last turn's error. */
const RosterRow = SpendRowSchema.extend({
  is_lead: z.boolean(),
  name: z.string().nullable(),
  session_id: z.string(),
  description: z.string().nullable(),
  context: z.string().nullable(),
  phase: z.string().nullable(),
  diagnostic: z.string().nullable(),
  member_model: z.unknown(),
  added_by: z.unknown(),
  has_session: z.boolean(),
  title: z.string().nullable(),
  model: z.unknown(),
  status: z.string().nullable(),
  activeTurnId: z.string().nullable(),
  leaseOwner: z.string().nullable(),
  leaseExpiresAt: z.date().nullable(),
  waitingFor: z.string().nullable(),
  failed_turn: z.boolean(),
  error: z.string().nullable(),
  reason: TurnEndReasonSchema.nullable(),
});
type RosterRow = z.infer<typeof RosterRow>;
const RosterRows = z.array(RosterRow);
const MemberPhaseSchema = z.enum(["provisioning", "active", "failed"]);

/**
 * Lead first, then teammates in creation order, each with its live status, its spend and why
 * its last turn failed (if it did): one statement (the team feed reads it every second).
 */
export async function listMembers(db: SqlRunner, teamId: SessionId): Promise<MemberView[]> {
  const rows = RosterRows.parse(
    await db.$queryRaw`WITH roster AS (
        SELECT true AS is_lead, 0 AS ordinal, NULL::text AS name, ${teamId}::text AS session_id, NULL::text AS description,
          NULL::text AS context, NULL::text AS phase, NULL::text AS diagnostic, NULL::jsonb AS member_model, NULL::jsonb AS added_by
        UNION ALL
        SELECT false, m.ordinal, m.name, m.session_id, m.description, m.context, m.phase, m.diagnostic, m.model, m.added_by
        FROM team_members m WHERE m.team_id = ${teamId}
      )
      SELECT r.is_lead, r.name, r.session_id, r.description, r.context, r.phase, r.diagnostic, r.member_model, r.added_by,
        s.id IS NOT NULL AS has_session, s.title, s.model, s.status, s.active_turn_id AS "activeTurnId",
        s.lease_owner AS "leaseOwner", s.lease_expires_at AS "leaseExpiresAt", s.waiting_for AS "waitingFor",
        coalesce(s.spent_input_tokens, 0) AS "spentInputTokens", coalesce(s.spent_output_tokens, 0) AS "spentOutputTokens",
        coalesce(s.spent_cached_tokens, 0) AS "spentCachedTokens", coalesce(s.spent_cost_nanos, 0) AS "spentCostNanos",
        coalesce(e.payload->>'reason' = 'error', false) AS failed_turn, e.payload->>'error' AS error, e.payload->>'reason' AS reason
      FROM roster r
        LEFT JOIN sessions s ON s.id = r.session_id
        LEFT JOIN LATERAL (
          SELECT payload FROM session_events
          WHERE session_id = r.session_id AND kind = 'turn_end' ORDER BY seq DESC LIMIT 1
        ) e ON true
      ORDER BY r.is_lead DESC, r.ordinal`,
  );
  const lead = rows[0];
  if (!lead?.is_lead || !lead.has_session) throw new AppError("SESSION_NOT_FOUND", `Team ${teamId} not found`);
  const leadModel = ModelChoiceSchema.parse(lead.model);
  const lastError = (r: RosterRow) => (r.failed_turn ? (r.error ?? "the turn failed") : null);
  const status = (r: RosterRow) => deriveStatus({ status: r.status ?? "", activeTurnId: r.activeTurnId, leaseOwner: r.leaseOwner, leaseExpiresAt: r.leaseExpiresAt, waitingFor: r.waitingFor });
  const leadView: MemberView = {
    name: LEAD_NAME,
    role: "lead",
    sessionId: teamId,
    description: lead.title ?? "",
    context: null,
    phase: "active",
    status: status(lead),
    diagnostic: null,
    model: leadModel,
    spend: spendOf(lead),
    addedBy: null,
    lastError: lastError(lead),
    lastTurnEnd: lead.reason,
  };
  return [
    leadView,
    ...rows.slice(1).map((m) => {
      const phase = MemberPhaseSchema.parse(m.phase);
      return MemberViewSchema.parse({
        name: m.name,
        role: "teammate",
        sessionId: m.session_id,
        description: m.description,
        context: m.context,
        phase,
        status: phase === "active" && m.has_session ? status(m) : phase,
        diagnostic: m.diagnostic,
        model: m.has_session ? m.model : (m.member_model ?? leadModel),
        spend: spendOf(m),
        addedBy: m.added_by,
        lastError: lastError(m),
        lastTurnEnd: m.reason,
      });
    }),
  ];
}

export const TeamSummarySchema = z.object({
  id: z.string(),
  title: z.string(),
  model: ModelChoiceSchema,
  status: AgentStatusSchema,
  memberCount: z.number().int(),
  lastActivityAt: z.date(),
  /** What all the team's sessions have spent. */
  spend: SpendSchema,
  /** The person's role in the team. */
  myRole: TeamRoleSchema,
  /** The team's budget stopped it: its agents are paused until it is raised. */
  budgetReached: z.boolean(),
});
export type TeamSummary = z.infer<typeof TeamSummarySchema>;

const TeamSummaryRows = z.array(
  SpendRowSchema.extend({
    id: z.string(),
    role: TeamRoleSchema,
    member_count: z.number(),
    last_activity_at: z.date(),
    budget_stopped: z.boolean(),
  }),
);

/** A person's teams (Lead sessions), most recently active first; the count includes the Lead. */
export async function listTeams(db: DbOrTx, opts: { userId: UserId; limit?: number }): Promise<TeamSummary[]> {
  const rows = TeamSummaryRows.parse(
    await db.$queryRaw`SELECT s.id, p.role,
        (SELECT count(*)::int FROM team_members m WHERE m.team_id = s.id) + 1 AS member_count,
        (SELECT max(t.updated_at) FROM sessions t WHERE t.team_id = s.id) AS last_activity_at,
        (SELECT tm.budget_stopped_at IS NOT NULL FROM teams tm WHERE tm.id = s.id) AS budget_stopped, spend.*
      FROM sessions s JOIN team_people p ON p.team_id = s.id AND p.user_id = ${opts.userId}
      CROSS JOIN ${teamSpendSums(Prisma.sql`s.id`)} spend
      WHERE s.member_name IS NULL AND s.team_id = s.id
      ORDER BY last_activity_at DESC LIMIT ${opts.limit ?? 100}`,
  );
  const leads = await db.session.findMany({ where: { id: { in: rows.map((r) => r.id) } }, select: { ...STATUS_COLUMNS, id: true, title: true, model: true } });
  const byId = new Map(leads.map((l) => [l.id, l]));
  return rows.flatMap((r) => {
    const lead = byId.get(r.id);
    if (!lead) return [];
    return [
      TeamSummarySchema.parse({
        id: r.id,
        title: lead.title,
        model: lead.model,
        status: deriveStatus(lead),
        memberCount: r.member_count,
        lastActivityAt: r.last_activity_at,
        spend: spendOf(r),
        myRole: r.role,
        budgetReached: r.budget_stopped,
      }),
    ];
  });
}
