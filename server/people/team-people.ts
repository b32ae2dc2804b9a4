import { z } from "zod";
import type { SqlRunner } from "../db/sql";
import { inTx, type Db, type DbOrTx, type Tx } from "../db/client";
import { AppError } from "../errors";
import { asSessionId, type SessionId, type UserId } from "../ids";
import { notifyActivity } from "../db/notify";
import { lockTeam } from "../members/membership";
import { recordAction } from "./actions";
import { refusalFor, TeamRoleSchema, type Need, type TeamRole } from "./roles";
import type { Person } from "./person";


// People in teams: roles, the one access check every procedure and feed goes through, the
// people list, role changes and removal (docs/SPEC.md §13). Invite links: invites.ts.


export interface TeamAccess {
  teamId: SessionId;
  role: TeamRole;
}

/** The role a person holds in a team, or null. */
export async function roleIn(db: DbOrTx, teamId: SessionId, userId: UserId): Promise<TeamRole | null> {
  const row = await db.teamPerson.findUnique({ where: { teamId_userId: { teamId, userId } }, select: { role: true } });
  return row ? TeamRoleSchema.parse(row.role) : null;
}

const AccessRows = z.array(z.object({ team_id: z.string(), role: TeamRoleSchema }));

/**
 * The access check: the team the session belongs to (a teammate's session id resolves to its
 * team), and the person's role in it. Outside the team the session does not exist for them
 * (`notFound`: the team's existence is not revealed); a role too weak for `need` is FORBIDDEN.
 * With `teamOnly`, the id must be the team's own (its Lead's): any other is `notFound` for
 * everyone, before the role is looked at, so a viewer naming a teammate's session as a team
 * hears the same as an owner does.
 */
export async function authorize(
  db: SqlRunner,
  person: Person,
  sessionId: SessionId,
  need: Need,
  notFound: () => AppError,
  opts: { teamOnly?: boolean } = {},
): Promise<TeamAccess> {
  const teamOnly = opts.teamOnly === true;
  const rows = AccessRows.parse(
    await db.$queryRaw`SELECT s.team_id, p.role FROM sessions s
      JOIN team_people p ON p.team_id = s.team_id AND p.user_id = ${person.id}
      WHERE s.id = ${sessionId} AND (NOT ${teamOnly} OR s.id = s.team_id)`,
  );
  const row = rows[0];
  if (!row) throw notFound();
  const refusal = refusalFor(need, row.role);
  if (refusal) throw refusal;
  return { teamId: asSessionId(row.team_id), role: row.role };
}

/** The teams a person belongs to, with their role. */
export async function teamsOf(db: DbOrTx, userId: UserId): Promise<Map<string, TeamRole>> {
  const rows = await db.teamPerson.findMany({ where: { userId }, select: { teamId: true, role: true } });
  return new Map(rows.map((r) => [r.teamId, TeamRoleSchema.parse(r.role)]));
}

/** Makes the creator (or forker) of a team its owner, in the creating transaction. */
export async function addOwner(tx: Tx, teamId: SessionId, person: Person): Promise<void> {
  await tx.teamPerson.create({ data: { teamId, userId: person.id, role: "owner" } });
}

/** Teams made before accounts existed (no people at all) go to the instance's owner. */
export async function adoptOrphanTeams(db: Db, userId: string): Promise<number> {
  return db.$executeRaw`INSERT INTO team_people (team_id, user_id, role)
    SELECT t.id, ${userId}, 'owner' FROM teams t
    WHERE NOT EXISTS (SELECT 1 FROM team_people p WHERE p.team_id = t.id)
    ON CONFLICT DO NOTHING`;
}

// ---- The people list -------------------------------------------------------------------

export const TeamPersonViewSchema = z.object({
  userId: z.string(),
  name: z.string(),
  /** Shown to owners only (who invite and remove people); null for everyone else. */
  email: z.string().nullable(),
  role: TeamRoleSchema,
  joinedAt: z.date(),
});
export type TeamPersonView = z.infer<typeof TeamPersonViewSchema>;

export async function listPeople(db: DbOrTx, teamId: SessionId, viewer: { role: TeamRole } = { role: "owner" }): Promise<TeamPersonView[]> {
  return peopleFor(viewer, await readPeople(db, teamId));
}

/** The team's people as an owner sees them (emails included); `peopleFor` narrows to a viewer. */
export async function readPeople(db: DbOrTx, teamId: SessionId): Promise<TeamPersonView[]> {
  const rows = await db.teamPerson.findMany({
    where: { teamId },
    orderBy: { createdAt: "asc" },
    select: { userId: true, role: true, createdAt: true, user: { select: { name: true, email: true } } },
  });
  return rows.map((r) => TeamPersonViewSchema.parse({ userId: r.userId, name: r.user.name, email: r.user.email, role: r.role, joinedAt: r.createdAt }));
}

/** Emails reach owners only. */
export function peopleFor(viewer: { role: TeamRole }, people: TeamPersonView[]): TeamPersonView[] {
  return viewer.role === "owner" ? people : people.map((p) => ({ ...p, email: null }));
}

/** People changes wake the team's feeds (and end a removed person's feeds). */
/** The team's people changed (who is in it, their roles, its invites). */
export const peopleChanged = (tx: DbOrTx, teamId: SessionId) => notifyActivity(tx, teamId, "people");

function personNotFound(userId: string): AppError {
  return new AppError("PERSON_NOT_FOUND", `${userId} is not in this team`, { userId });
}

/** An invite that can still be used: uses left, not revoked, not expired. */
export const openInvite = (db: DbOrTx) => ({ uses: { lt: db.teamInvite.fields.maxUses }, revokedAt: null, expiresAt: { gt: new Date() } });

/**
 * Someone who stops being an owner (demoted, removed, gone) leaves no open links behind: they
 * saw each link once and could otherwise let themselves (or anyone) back in with it.
 */
async function revokeInvitesBy(tx: Tx, teamId: SessionId, userId: UserId): Promise<void> {
  await tx.teamInvite.updateMany({ where: { teamId, createdBy: userId, ...openInvite(tx) }, data: { revokedAt: new Date() } });
}

/** Under the team lock: a change that would leave the team without an owner is refused. */
async function assertKeepsAnOwner(tx: Tx, teamId: SessionId, leaving: UserId): Promise<void> {
  const owners = await tx.teamPerson.count({ where: { teamId, role: "owner", userId: { not: leaving } } });
  if (owners === 0) throw new AppError("LAST_OWNER", "A team keeps at least one owner: make someone else owner first");
}

export async function setRole(db: Db, by: Person, teamId: SessionId, userId: UserId, role: TeamRole): Promise<TeamPersonView> {
  return inTx(db, async (tx) => {
    await lockTeam(tx, teamId);
    const current = await roleIn(tx, teamId, userId);
    if (!current) throw personNotFound(userId);
    if (current === "owner" && role !== "owner") await assertKeepsAnOwner(tx, teamId, userId);
    if (current !== role) {
      // Recorded first: the record re-checks the actor's own role, which this may change.
      await recordAction(tx, { person: by, teamId }, "role_changed", { detail: { userId, from: current, to: role } });
      await tx.teamPerson.update({ where: { teamId_userId: { teamId, userId } }, data: { role } });
      if (current === "owner") await revokeInvitesBy(tx, teamId, userId);
      await peopleChanged(tx, teamId);
    }
    const view = (await listPeople(tx, teamId)).find((p) => p.userId === userId);
    if (!view) throw personNotFound(userId);
    return view;
  });
}

/** Removes a person (or, with `userId` = the caller, leaves). Access ends with the commit. */
export async function removePerson(db: Db, by: Person, teamId: SessionId, userId: UserId): Promise<void> {
  await inTx(db, async (tx) => {
    await lockTeam(tx, teamId);
    const current = await roleIn(tx, teamId, userId);
    if (!current) throw personNotFound(userId);
    if (current === "owner") await assertKeepsAnOwner(tx, teamId, userId);
    // Recorded first: the record re-checks the actor's own role, which leaving removes.
    await recordAction(tx, { person: by, teamId }, userId === by.id ? "left" : "person_removed", { detail: { userId } });
    await tx.teamPerson.delete({ where: { teamId_userId: { teamId, userId } } });
    await tx.presence.deleteMany({ where: { teamId, userId } });
    await revokeInvitesBy(tx, teamId, userId);
    await peopleChanged(tx, teamId);
  });
}
