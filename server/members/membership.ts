import { z } from "zod";
import type { DbOrTx, Tx } from "../db/client";
import type { SqlRunner } from "../db/sql";
import { AppError } from "../errors";
import { asSessionId, type SessionId } from "../ids";
import { LEAD_NAME } from "./names";

// Who is in a team and who acts. The Lead is the pseudo-member `lead` whose session id is the
// team id; teammates are rows of team_members. Every caller identity is resolved from a
// session here, never taken from model input.

/** A member as addressed: its session and its name (`lead` for the Lead). */
export interface MemberRef {
  sessionId: SessionId;
  name: string;
}

/** Who acts: a member of `teamId`. A person in the browser acts as the team's Lead. */
export interface Membership extends MemberRef {
  teamId: SessionId;
  isLead: boolean;
}

/** The Lead of a team, as a Membership. */
export function leadOf(teamId: SessionId): Membership {
  return { teamId, sessionId: teamId, name: LEAD_NAME, isLead: true };
}

const MembershipRows = z.array(
  z.object({ team_id: z.string().nullable(), member_name: z.string().nullable(), team_title: z.string().nullable() }),
);

/** The membership of the agent running in `sessionId`, and its team's title (one read). */
export async function membershipAndTeamTitle(db: SqlRunner, sessionId: SessionId): Promise<{ me: Membership; teamTitle: string | null }> {
  const s = MembershipRows.parse(
    await db.$queryRaw`SELECT s.team_id, s.member_name, t.title AS team_title
      FROM sessions s LEFT JOIN sessions t ON t.id = s.team_id WHERE s.id = ${sessionId}`,
  )[0];
  if (!s) throw new AppError("SESSION_NOT_FOUND", `Session ${sessionId} not found`);
  if (!s.team_id) throw new AppError("TEAM_NOT_MEMBER", `Session ${sessionId} is not in a team`);
  const teamId = asSessionId(s.team_id);
  const me = s.member_name === null ? leadOf(teamId) : { teamId, sessionId, name: s.member_name, isLead: false };
  return { me, teamTitle: s.team_title };
}

/** The membership of the agent running in `sessionId`. */
export async function membershipOf(db: SqlRunner, sessionId: SessionId): Promise<Membership> {
  return (await membershipAndTeamTitle(db, sessionId)).me;
}

/**
 * A membership someone else built (the browser's Lead, a test) must match the team:
 * the Lead's session is the team id, a teammate is a member row with that session.
 */
export async function assertMembership(db: DbOrTx, me: Membership): Promise<void> {
  const notMember = () =>
    new AppError("TEAM_NOT_MEMBER", `${me.name} (${me.sessionId}) is not a member of team ${me.teamId}`, {
      teamId: me.teamId,
      sessionId: me.sessionId,
      name: me.name,
    });
  if (me.isLead) {
    if (me.sessionId !== me.teamId || me.name !== LEAD_NAME) throw notMember();
    return;
  }
  if (me.sessionId === me.teamId || me.name === LEAD_NAME) throw notMember();
  const member = await db.teamMember.findUnique({
    where: { teamId_name: { teamId: me.teamId, name: me.name } },
    select: { sessionId: true },
  });
  if (member?.sessionId !== me.sessionId) throw notMember();
}

/** A teammate acts only while its member is active (provisioning or failed ones never run). */
export async function assertActiveMember(db: DbOrTx, me: Membership): Promise<void> {
  if (me.isLead) return;
  const m = await db.teamMember.findUnique({ where: { sessionId: me.sessionId }, select: { phase: true } });
  if (m?.phase !== "active") {
    throw new AppError("TEAM_NOT_MEMBER", `${me.name} is ${m?.phase ?? "not a member"}, not active, and cannot act in the team`);
  }
}

/** The Lead and every teammate whatever its phase (its session may not exist yet), in creation order. */
export async function teamMemberRefs(db: DbOrTx, teamId: SessionId): Promise<MemberRef[]> {
  const rows = await db.teamMember.findMany({ where: { teamId }, orderBy: { ordinal: "asc" }, select: { name: true, sessionId: true } });
  return [{ sessionId: teamId, name: LEAD_NAME }, ...rows.map((r) => ({ sessionId: asSessionId(r.sessionId), name: r.name }))];
}

function memberNotFound(name: string): AppError {
  return new AppError("TEAM_MEMBER_NOT_FOUND", `No member named ${JSON.stringify(name)} in this team`, { name });
}

/** The session of the member called `name` (`lead` included), whatever its phase. */
export async function memberSessionOf(db: DbOrTx, teamId: SessionId, name: string): Promise<SessionId> {
  if (name === LEAD_NAME) return teamId;
  const m = await db.teamMember.findUnique({ where: { teamId_name: { teamId, name } }, select: { sessionId: true } });
  if (!m) throw memberNotFound(name);
  return asSessionId(m.sessionId);
}

/**
 * `lead` or an active teammate: whom a message or an interrupt (`for: "message"`, worded for
 * a model addressing a teammate) or a task (`for: "task"`) can go to. Unknown names are
 * TEAM_MEMBER_NOT_FOUND; members still provisioning or failed TEAM_INVALID_TARGET.
 */
export async function resolveActiveMember(
  db: DbOrTx,
  teamId: SessionId,
  name: string,
  purpose: "message" | "task",
): Promise<MemberRef> {
  if (name === LEAD_NAME) return { sessionId: teamId, name };
  const m = await db.teamMember.findUnique({
    where: { teamId_name: { teamId, name } },
    select: { sessionId: true, phase: true },
  });
  const details = { name, phase: m?.phase };
  if (!m) {
    if (purpose === "task") throw memberNotFound(name);
    throw new AppError("TEAM_MEMBER_NOT_FOUND", `No teammate named "${name}". Use list_agents to see the team.`, { name });
  }
  if (m.phase !== "active") {
    const why =
      purpose === "task"
        ? `${name} is ${m.phase}, not active; tasks go to active members`
        : `Teammate "${name}" is ${m.phase} and cannot receive messages`;
    throw new AppError("TEAM_INVALID_TARGET", why, details);
  }
  return { sessionId: asSessionId(m.sessionId), name };
}

const TeamRow = z.array(z.object({ next_task_number: z.number().int() }));

/**
 * Locks the team row for the rest of the transaction. Teammate reservations and every board
 * change take it first, so the member limit, name reservations, revisions and the task-id
 * counter cannot race; other teams are not affected. (Finishing a reserved member locks only
 * its member row.) Returns the next task number.
 */
export async function lockTeam(tx: Tx, teamId: SessionId): Promise<number> {
  const row = TeamRow.parse(await tx.$queryRaw`SELECT next_task_number FROM teams WHERE id = ${teamId} FOR UPDATE`)[0];
  if (!row) throw new AppError("TEAM_NOT_MEMBER", `Team ${teamId} does not exist`, { teamId });
  return row.next_task_number;
}
