import { z } from "zod";
import { asJson, inTx, type Db, type DbOrTx, type Tx } from "../db/client";
import type { SqlRunner } from "../db/sql";
import { isTransientDbError } from "../db/errors";
import { AppError, isAppError } from "../errors";
import { asMessageId, asSessionId, newSessionId, type MessageId, type SessionId, type UserId } from "../ids";
import { boundedText } from "../input-guard";
import { DEFAULT_TEAM_LIMITS, LIMITS, type TeamLimits } from "../limits";
import { notifyActivity } from "../db/notify";
import { modelKey, SpendSchema, sumSpend } from "../models/catalog";
import { ModelChoiceSchema, type ModelChoice } from "../models/choice";
import { enqueue } from "../runtime/inbox";
import { TurnEndReasonSchema } from "../runtime/events";
import { appendEvents } from "../runtime/session-log";
import { AgentStatusSchema, completedTurnsSeed, deriveStatus, spendOf, SpendRowSchema, STATUS_COLUMNS, teamSpendSums } from "../runtime/sessions";
import { Prisma } from "../db/generated/client";
import { recordAction, type HumanActor } from "../people/actions";
import { PersonRefSchema, ref } from "../person-ref";
import { TeamRoleSchema } from "../people/roles";
import { lockTeam, type Membership } from "./membership";
import { LEAD_NAME, MemberNameSchema } from "./names";

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

/**
 * A new teammate, as the spawn_teammate tool and the browser take it. The name's rules are
 * MemberNameSchema's (checked by reserveTeammate, so a bad name is TEAM_INVALID_MEMBER_NAME).
 */
export const SpawnInputSchema = z.object({
  name: z.string(),
  description: z.string().trim().min(1).max(LIMITS.memberDescriptionChars),
  prompt: boundedText(LIMITS.promptBytes, "prompt", { trim: true }),
  context: z.enum(["fresh", "fork"]).default("fresh"),
  /** One of the offered models as "provider:model" (`modelKey`); unset, the Lead's. */
  model: z.string().trim().min(1).max(256).optional(),
});
export type SpawnInput = z.output<typeof SpawnInputSchema>;

export interface SpawnOptions {
  limits?: Pick<TeamLimits, "maxMembers">;
  /** What this server offers (models/registry.ts `availableModels`): a spawn may name one of these or the Lead's model. */
  models?: readonly ModelChoice[];
  /** The person adding the teammate from the room (recorded); unset: the Lead spawned it. */
  by?: HumanActor;
}

/** The model a spawn names, or the Lead's; a model not offered is MODEL_UNAVAILABLE (nothing persisted). */
function teammateModel(key: string | undefined, lead: ModelChoice, offered: readonly ModelChoice[]): ModelChoice {
  if (key === undefined) return lead;
  const found = [lead, ...offered].find((m) => modelKey(m) === key);
  if (!found) {
    const names = [...new Set([lead, ...offered].map(modelKey))].join(", ");
    throw new AppError("MODEL_UNAVAILABLE", `Model "${key}" is not offered on this server; name one of: ${names} (or leave model out for the Lead's)`);
  }
  return { provider: found.provider, model: found.model };
}

/**
 * Creates a teammate: `reserveTeammate` (the member row, provisioning, name reserved forever),
 * then `completeProvisioning` (the child session holding its initial task, and `active`, in
 * one transaction). A crash between the two is finished by recovery from the member row alone.
 */
export async function spawnTeammate(db: Db, caller: Membership, input: SpawnInput, opts: SpawnOptions = {}): Promise<MemberView> {
  const name = await reserveTeammate(db, caller, input, opts);
  return provisionOrReport(db, caller.teamId, name, () => completeProvisioning(db, caller.teamId, name));
}

/**
 * Step 1: validates, then commits the member row in `provisioning` with everything needed to
 * finish it later (prompt, fork point, model, and the tool call that asked for it). Refusals
 * persist nothing. Returns the reserved name.
 */
export async function reserveTeammate(
  db: Db,
  caller: Membership,
  input: SpawnInput,
  { limits = DEFAULT_TEAM_LIMITS, models = [], by, tool = null }: SpawnOptions & { tool?: { callKey: string; fence?: (tx: Tx) => Promise<void> } | null } = {},
): Promise<string> {
  if (!caller.isLead) throw new AppError("TEAM_LEAD_REQUIRED", "Only the Lead can spawn teammates");
  const parsed = MemberNameSchema.safeParse(input.name);
  if (!parsed.success) {
    throw new AppError("TEAM_INVALID_MEMBER_NAME", `Invalid teammate name "${input.name}": ${parsed.error.issues[0]?.message}`);
  }
  const { teamId } = caller;
  await inTx(db, async (tx) => {
    await lockTeam(tx, teamId);
    await tool?.fence?.(tx);
    const lead = await tx.session.findUniqueOrThrow({ where: { id: teamId }, select: { model: true } });
    const model = teammateModel(input.model, ModelChoiceSchema.parse(lead.model), models);
    const taken = await tx.teamMember.findUnique({ where: { teamId_name: { teamId, name: input.name } } });
    if (taken) {
      throw new AppError("TEAM_MEMBER_NAME_TAKEN", `The name "${input.name}" is already used in this team (names are never reused)`);
    }
    const count = await tx.teamMember.count({ where: { teamId } });
    if (count >= limits.maxMembers) {
      throw new AppError("TEAM_MEMBER_LIMIT", `This team already has ${count} teammates (limit ${limits.maxMembers})`);
    }
    // A fork teammate starts from the Lead's turns completed before this spawn.
    const cut = input.context === "fork" ? await lastTurnEndSeq(tx, teamId) : null;
    await tx.teamMember.create({
      data: {
        teamId,
        name: input.name,
        sessionId: newSessionId(),
        description: input.description,
        context: input.context,
        phase: "provisioning",
        prompt: input.prompt,
        forkThroughSeq: cut,
        toolCallKey: tool?.callKey ?? null,
        model: asJson(model),
        addedBy: by ? asJson(ref(by.person)) : undefined,
      },
    });
    if (by) await recordAction(tx, by, "teammate_added", { detail: { name: input.name } });
    await notifyActivity(tx, teamId, "team");
  });
  return input.name;
}

async function lastTurnEndSeq(db: DbOrTx, sessionId: string): Promise<number> {
  const row = await db.sessionEvent.findFirst({
    where: { sessionId, kind: "turn_end" },
    orderBy: { seq: "desc" },
    select: { seq: true },
  });
  return row?.seq ?? 0;
}

const ProvisioningRows = z.array(
  z.object({
    sessionId: z.string(),
    phase: z.string(),
    prompt: z.string().nullable(),
    context: z.string(),
    forkThroughSeq: z.number().int().nullable(),
    model: ModelChoiceSchema.nullable(),
  }),
);

/**
 * Step 2, idempotent and safe to run from several processes at once (the member row is locked):
 * creates the child session if missing, gives it its initial task if it holds none, and marks
 * the member active — all in one transaction. A member that is no longer provisioning is left
 * as it is. A member without a stored prompt (reserved by an older version) cannot be finished
 * and fails. Returns the member's view.
 */
export async function completeProvisioning(db: DbOrTx, teamId: SessionId, name: string): Promise<MemberView> {
  await inTx(db, async (tx) => {
    const rows = ProvisioningRows.parse(
      await tx.$queryRaw`SELECT session_id AS "sessionId", phase, prompt, context, fork_through_seq AS "forkThroughSeq", model
        FROM team_members WHERE team_id = ${teamId} AND name = ${name} FOR UPDATE`,
    );
    const m = rows[0];
    if (!m) throw new AppError("TEAM_MEMBER_NOT_FOUND", `No teammate named "${name}"`);
    if (m.phase !== "provisioning") return;
    const childId = asSessionId(m.sessionId);
    const taskId = initialTaskId(childId);
    const holdsTask =
      (await tx.inboxItem.count({ where: { sessionId: childId, id: taskId } })) > 0 ||
      (await tx.sessionEvent.count({ where: { sessionId: childId, messageId: taskId } })) > 0;
    if (holdsTask) return settleMember(tx, teamId, name, "active", null);
    if (m.prompt === null) {
      await settleMember(tx, teamId, name, "failed", "Provisioning was interrupted before the teammate received its task");
      return;
    }
    const child = await tx.session.findUnique({ where: { id: childId }, select: { id: true } });
    if (!child) {
      const lead = await tx.session.findUniqueOrThrow({ where: { id: teamId }, select: { model: true, optionalContext: true } });
      const fork = m.context === "fork";
      await tx.session.create({
        data: {
          id: childId,
          teamId,
          memberName: name,
          title: name,
          // The model the spawn chose; older rows without one: the Lead's.
          model: asJson(m.model ?? lead.model),
          optionalContext: lead.optionalContext,
          forkedFromId: fork ? teamId : null,
        },
      });
      const cut = m.forkThroughSeq ?? 0;
      if (fork && cut > 0) await appendEvents(tx, childId, (await completedTurnsSeed(tx, teamId, cut)).seed, null);
    }
    // The initial task holds only the task text; identity comes from runtime context.
    await enqueue(tx, childId, {
      id: taskId,
      mode: "queue",
      text: m.prompt,
      source: { kind: "team", teamId, messageId: taskId, senderSessionId: teamId, senderName: LEAD_NAME },
    });
    await settleMember(tx, teamId, name, "active", null);
  });
  return memberView(db, teamId, name);
}

/**
 * Runs the provisioning step and reports the member as it then is: a real failure (the
 * database refused the child) settles it `failed` with the reason; a temporary one (the
 * database went away) leaves it provisioning for recovery to finish — never `failed`.
 */
export async function provisionOrReport(
  db: Db,
  teamId: SessionId,
  name: string,
  complete: () => Promise<MemberView>,
): Promise<MemberView> {
  try {
    return await complete();
  } catch (e) {
    if (isAppError(e, "LEASE_LOST") || isTransientDbError(e)) throw e;
    await settleMember(db, teamId, name, "failed", `Provisioning failed: ${lastLine(e)}`).catch(() => undefined);
    return memberView(db, teamId, name);
  }
}

/** The last line of an error's message (Prisma puts the database's own words there). */
function lastLine(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  return message.split("\n").filter(Boolean).at(-1) ?? message;
}

async function memberView(db: DbOrTx, teamId: SessionId, name: string): Promise<MemberView> {
  const view = (await listMembers(db, teamId)).find((m) => m.name === name);
  if (!view) throw new AppError("TEAM_PROVISIONING_CONFLICT", `Teammate "${name}" vanished during provisioning`);
  return view;
}

/** The member a spawn_teammate call reserved, if its reservation committed. */
export async function memberByToolCall(db: DbOrTx, toolCallKey: string): Promise<{ teamId: SessionId; name: string } | null> {
  const m = await db.teamMember.findUnique({ where: { toolCallKey }, select: { teamId: true, name: true } });
  return m ? { teamId: asSessionId(m.teamId), name: m.name } : null;
}

/** The message id of a teammate's initial task: known in advance, so recovery can look for it. */
export function initialTaskId(childId: SessionId): MessageId {
  return asMessageId(`msg_task_${childId}`);
}

const SettledRows = z.array(z.object({ session_id: z.string() }));

/**
 * provisioning → active | failed; no other transition. A failed member's session (if one
 * exists) is marked failed too, so every view shows it and no process ever drives it.
 */
async function settleMember(db: DbOrTx, teamId: string, name: string, phase: "active" | "failed", diagnostic: string | null) {
  const rows = SettledRows.parse(
    await db.$queryRaw`UPDATE team_members SET phase = ${phase}, diagnostic = ${diagnostic}, updated_at = now()
      WHERE team_id = ${teamId} AND name = ${name} AND phase = 'provisioning' RETURNING session_id`,
  );
  const row = rows[0];
  if (!row) throw new AppError("TEAM_PROVISIONING_CONFLICT", `Teammate "${name}" is no longer provisioning`);
  if (phase === "failed") await db.$executeRaw`UPDATE sessions SET status = 'failed' WHERE id = ${row.session_id}`;
  await notifyActivity(db, teamId, "team");
}

/**
 * Finishes members a crash (or a database outage) left in provisioning, from the member row
 * and the child's persisted session alone (no model call). Returns how many it settled.
 */
export async function recoverProvisioning(db: Db, olderThanMs = 0, giveUpAfterMs = PROVISIONING_GIVE_UP_MS): Promise<number> {
  const stuck = await db.teamMember.findMany({
    where: { phase: "provisioning", updatedAt: { lt: new Date(Date.now() - olderThanMs) } },
    select: { teamId: true, name: true, createdAt: true },
  });
  let settled = 0;
  for (const m of stuck) {
    const teamId = asSessionId(m.teamId);
    const view = await provisionOrReport(db, teamId, m.name, () => completeProvisioning(db, teamId, m.name)).catch(async (e: unknown) => {
      // Temporary failures are retried on every sweep, but not forever: a member that could
      // not be finished for this long fails, so nobody waits on it for good.
      if (Date.now() - m.createdAt.getTime() < giveUpAfterMs) return null;
      await settleMember(db, teamId, m.name, "failed", `Provisioning could not finish: ${lastLine(e)}`).catch(() => undefined);
      return memberView(db, teamId, m.name).catch(() => null);
    });
    if (view && view.phase !== "provisioning") settled += 1;
  }
  return settled;
}

/** How long recovery keeps retrying a spawn that fails for temporary reasons. */
export const PROVISIONING_GIVE_UP_MS = 10 * 60_000;

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
