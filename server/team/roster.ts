import { z } from "zod";
import { asJson, inTx, type Db, type DbOrTx } from "../db/client";
import { AppError } from "../errors";
import { newSessionId, type MessageId, type SessionId } from "../ids";
import { notifyActivity } from "../live/activity";
import { ModelChoiceSchema } from "../models/registry";
import { enqueue } from "../runtime/inbox";
import { appendEvents } from "../runtime/session-log";
import { AgentStatusSchema, completedTurnsSeed, deriveStatus } from "../runtime/sessions";
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
  tokensUsed: z.number().int(),
});
export type MemberView = z.infer<typeof MemberViewSchema>;

/** Who is calling: resolved from the session, never from model input. */
export interface Membership {
  teamId: SessionId;
  sessionId: SessionId;
  name: string;
  isLead: boolean;
}

export interface RosterLimits {
  /** Teammates per team, failed ones included (the Lead is not counted). */
  maxMembers: number;
}
export const DEFAULT_ROSTER_LIMITS: RosterLimits = { maxMembers: 8 };

export async function membershipOf(db: DbOrTx, sessionId: SessionId): Promise<Membership> {
  const s = await db.session.findUnique({ where: { id: sessionId }, select: { teamId: true, memberName: true } });
  if (!s) throw new AppError("SESSION_NOT_FOUND", `Session ${sessionId} not found`);
  if (!s.teamId) throw new AppError("TEAM_NOT_MEMBER", `Session ${sessionId} is not in a team`);
  const isLead = s.memberName === null;
  return { teamId: s.teamId as SessionId, sessionId, name: isLead ? LEAD_NAME : s.memberName!, isLead };
}

const sessionSelect = {
  id: true,
  title: true,
  model: true,
  status: true,
  activeTurnId: true,
  leaseOwner: true,
  leaseExpiresAt: true,
} as const;

async function tokensBySession(db: DbOrTx, ids: string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = z.array(z.object({ session_id: z.string(), tokens: z.number() })).parse(
    await db.$queryRaw`SELECT session_id,
        COALESCE(SUM((payload->'usage'->>'inputTokens')::int + (payload->'usage'->>'outputTokens')::int), 0)::int AS tokens
      FROM session_events WHERE kind = 'assistant_message' AND session_id = ANY(${ids}::text[])
      GROUP BY session_id`,
  );
  return new Map(rows.map((r) => [r.session_id, r.tokens]));
}

/** Lead first, then teammates in creation order, each with its live status. */
export async function listMembers(db: DbOrTx, teamId: SessionId): Promise<MemberView[]> {
  const lead = await db.session.findUnique({ where: { id: teamId }, select: sessionSelect });
  if (!lead) throw new AppError("SESSION_NOT_FOUND", `Team ${teamId} not found`);
  const members = await db.teamMember.findMany({ where: { teamId }, orderBy: { ordinal: "asc" } });
  const sessions = await db.session.findMany({
    where: { id: { in: members.map((m) => m.sessionId) } },
    select: sessionSelect,
  });
  const byId = new Map(sessions.map((s) => [s.id, s]));
  const tokens = await tokensBySession(db, [teamId, ...members.map((m) => m.sessionId)]);
  const leadView: MemberView = {
    name: LEAD_NAME,
    role: "lead",
    sessionId: teamId,
    description: lead.title,
    context: null,
    phase: "active",
    status: deriveStatus(lead),
    diagnostic: null,
    model: ModelChoiceSchema.parse(lead.model),
    tokensUsed: tokens.get(teamId) ?? 0,
  };
  return [
    leadView,
    ...members.map((m) => {
      const s = byId.get(m.sessionId);
      const phase = z.enum(["provisioning", "active", "failed"]).parse(m.phase);
      return MemberViewSchema.parse({
        name: m.name,
        role: "teammate",
        sessionId: m.sessionId,
        description: m.description,
        context: m.context,
        phase,
        status: phase === "active" && s ? deriveStatus(s) : phase,
        diagnostic: m.diagnostic,
        model: s ? s.model : lead.model,
        tokensUsed: tokens.get(m.sessionId) ?? 0,
      });
    }),
  ];
}

/**
 * The session a message to `name` goes to: `lead` or an active teammate. Unknown names are
 * TEAM_MEMBER_NOT_FOUND; members still provisioning or failed are TEAM_INVALID_TARGET.
 */
export async function resolveTarget(db: DbOrTx, teamId: SessionId, name: string): Promise<{ sessionId: SessionId; name: string }> {
  if (name === LEAD_NAME) return { sessionId: teamId, name };
  const m = await db.teamMember.findUnique({ where: { teamId_name: { teamId, name } } });
  if (!m) throw new AppError("TEAM_MEMBER_NOT_FOUND", `No teammate named "${name}". Use list_agents to see the team.`);
  if (m.phase !== "active") {
    throw new AppError("TEAM_INVALID_TARGET", `Teammate "${name}" is ${m.phase} and cannot receive messages`);
  }
  return { sessionId: m.sessionId as SessionId, name };
}

export interface SpawnInput {
  name: string;
  description: string;
  prompt: string;
  context: "fresh" | "fork";
}

/**
 * Creates a teammate in three durable steps: the member row (provisioning, name reserved
 * forever), then the child session holding its initial task, then `active`. A crash between
 * them is settled by recoverProvisioning from the child's session alone.
 */
export async function spawnTeammate(
  db: Db,
  caller: Membership,
  input: SpawnInput,
  limits: RosterLimits = DEFAULT_ROSTER_LIMITS,
): Promise<MemberView> {
  if (!caller.isLead) throw new AppError("TEAM_LEAD_REQUIRED", "Only the Lead can spawn teammates");
  const parsed = MemberNameSchema.safeParse(input.name);
  if (!parsed.success) {
    throw new AppError("TEAM_INVALID_MEMBER_NAME", `Invalid teammate name "${input.name}": ${parsed.error.issues[0]?.message}`);
  }
  const { teamId } = caller;
  const childId = newSessionId();

  await inTx(db, async (tx) => {
    await tx.$executeRaw`SELECT 1 FROM teams WHERE id = ${teamId} FOR UPDATE`;
    const taken = await tx.teamMember.findUnique({ where: { teamId_name: { teamId, name: input.name } } });
    if (taken) {
      throw new AppError("TEAM_MEMBER_NAME_TAKEN", `The name "${input.name}" is already used in this team (names are never reused)`);
    }
    const count = await tx.teamMember.count({ where: { teamId } });
    if (count >= limits.maxMembers) {
      throw new AppError("TEAM_MEMBER_LIMIT", `This team already has ${count} teammates (limit ${limits.maxMembers})`);
    }
    await tx.teamMember.create({
      data: { teamId, name: input.name, sessionId: childId, description: input.description, context: input.context, phase: "provisioning" },
    });
    await notifyActivity(tx, teamId, "state");
  });

  try {
    // A fork teammate starts from the Lead's completed turns (not the one spawning it).
    const seed = input.context === "fork" ? (await completedTurnsSeed(db, teamId)).seed : [];
    await inTx(db, async (tx) => {
      const lead = await tx.session.findUniqueOrThrow({ where: { id: teamId }, select: { model: true, optionalContext: true } });
      await tx.session.create({
        data: {
          id: childId,
          teamId,
          memberName: input.name,
          title: input.name,
          model: asJson(lead.model),
          optionalContext: lead.optionalContext,
          forkedFromId: input.context === "fork" ? teamId : null,
        },
      });
      if (seed.length > 0) await appendEvents(tx, childId, seed, null);
      // The initial task holds only the task text; identity comes from runtime context.
      await enqueue(tx, childId, {
        id: initialTaskId(childId),
        mode: "queue",
        text: input.prompt,
        source: { kind: "team", teamId, messageId: initialTaskId(childId), senderSessionId: teamId, senderName: LEAD_NAME },
      });
    });
    // A recovery sweep may have settled it already from the same evidence (the task is there).
    await settleMember(db, teamId, input.name, "active", null).catch(async (e: unknown) => {
      const now = await db.teamMember.findUnique({ where: { teamId_name: { teamId, name: input.name } }, select: { phase: true } });
      if (now?.phase !== "active") throw e;
    });
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    await settleMember(db, teamId, input.name, "failed", `Provisioning failed: ${message}`);
  }
  const view = (await listMembers(db, teamId)).find((m) => m.name === input.name);
  if (!view) throw new AppError("TEAM_PROVISIONING_CONFLICT", `Teammate "${input.name}" vanished during provisioning`);
  return view;
}

/** The message id of a teammate's initial task: known in advance, so recovery can look for it. */
export function initialTaskId(childId: SessionId): MessageId {
  return `msg_task_${childId}` as MessageId;
}

/** provisioning → active | failed; no other transition. */
async function settleMember(db: DbOrTx, teamId: string, name: string, phase: "active" | "failed", diagnostic: string | null) {
  const n = await db.$executeRaw`UPDATE team_members SET phase = ${phase}, diagnostic = ${diagnostic}, updated_at = now()
    WHERE team_id = ${teamId} AND name = ${name} AND phase = 'provisioning'`;
  if (n === 0) throw new AppError("TEAM_PROVISIONING_CONFLICT", `Teammate "${name}" is no longer provisioning`);
  await notifyActivity(db, teamId, "state");
}

/**
 * Settles members a crash left in provisioning, from the child's persisted session alone (no
 * model call): initial task present → active, otherwise failed. Returns how many it settled.
 */
export async function recoverProvisioning(db: Db, olderThanMs = 0): Promise<number> {
  const stuck = await db.teamMember.findMany({
    where: { phase: "provisioning", updatedAt: { lt: new Date(Date.now() - olderThanMs) } },
  });
  let settled = 0;
  for (const m of stuck) {
    const taskId = initialTaskId(m.sessionId as SessionId);
    const holdsTask =
      (await db.inboxItem.count({ where: { sessionId: m.sessionId, id: taskId } })) > 0 ||
      (await db.sessionEvent.count({ where: { sessionId: m.sessionId, messageId: taskId } })) > 0;
    try {
      if (holdsTask) await settleMember(db, m.teamId, m.name, "active", null);
      else await settleMember(db, m.teamId, m.name, "failed", "Provisioning was interrupted before the teammate received its task");
      settled += 1;
    } catch {
      // Settled concurrently by another process: fine.
    }
  }
  return settled;
}

export const TeamSummarySchema = z.object({
  id: z.string(),
  title: z.string(),
  model: ModelChoiceSchema,
  status: AgentStatusSchema,
  memberCount: z.number().int(),
  lastActivityAt: z.date(),
});
export type TeamSummary = z.infer<typeof TeamSummarySchema>;

/** Teams (Lead sessions), most recently active first; the count includes the Lead. */
export async function listTeams(db: DbOrTx, limit = 100): Promise<TeamSummary[]> {
  const rows = z
    .array(
      z.object({
        id: z.string(),
        member_count: z.number(),
        last_activity_at: z.date(),
      }),
    )
    .parse(
      await db.$queryRaw`SELECT s.id,
          (SELECT count(*)::int FROM team_members m WHERE m.team_id = s.id) + 1 AS member_count,
          (SELECT max(t.updated_at) FROM sessions t WHERE t.team_id = s.id) AS last_activity_at
        FROM sessions s WHERE s.member_name IS NULL AND s.team_id = s.id
        ORDER BY last_activity_at DESC LIMIT ${limit}`,
    );
  const leads = await db.session.findMany({ where: { id: { in: rows.map((r) => r.id) } }, select: sessionSelect });
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
      }),
    ];
  });
}
