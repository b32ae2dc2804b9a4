import { z } from "zod";
import type { SqlRunner } from "../db/sql";
import { inTx, type Db, type DbOrTx, type Tx } from "../db/client";
import { AppError } from "../errors";
import { asSessionId, newInviteId, type SessionId, type UserId } from "../ids";
import { LIMITS } from "../limits";
import { notifyActivity } from "../db/notify";
import { lockTeam } from "../team/membership";
import { recordAction } from "./actions";
import { refusalFor, TeamRoleSchema, type Need, type TeamRole } from "./roles";
import type { Person } from "./person";
import { newSecret, secretHash } from "./tokens";

// People in teams: roles, the one access check every procedure and feed goes through, and
// invite links (docs/SPEC.md §13).


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
const notifyPeople = (tx: DbOrTx, teamId: SessionId) => notifyActivity(tx, teamId, "people");

function personNotFound(userId: string): AppError {
  return new AppError("PERSON_NOT_FOUND", `${userId} is not in this team`, { userId });
}

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
      await notifyPeople(tx, teamId);
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
    await notifyPeople(tx, teamId);
  });
}

// ---- Invite links ------------------------------------------------------------------------

const INVITE_PREFIX = "inv_";
export const INVITE_DEFAULT_HOURS = 72;
export const INVITE_MAX_HOURS = 30 * 24;
export const InviteRoleSchema = TeamRoleSchema.exclude(["owner"]);
/** An invite link's secret as requests carry it (sign-up body, accept, preview). */
export const InviteTokenSchema = z.string().min(1).max(128);

/** An invite that can still be used: uses left, not revoked, not expired. */
const openInvite = (db: DbOrTx) => ({ uses: { lt: db.teamInvite.fields.maxUses }, revokedAt: null, expiresAt: { gt: new Date() } });

export const InviteViewSchema = z.object({
  id: z.string(),
  role: InviteRoleSchema,
  createdByName: z.string(),
  createdAt: z.date(),
  expiresAt: z.date(),
  /** How many people the link lets in, and how many it has. */
  maxUses: z.number().int(),
  uses: z.number().int(),
});
export type InviteView = z.infer<typeof InviteViewSchema>;

export const InviteStatusSchema = z.enum(["valid", "expired", "revoked", "used"]);
export const InviteInfoSchema = z.object({
  teamTitle: z.string(),
  role: InviteRoleSchema,
  invitedBy: z.string(),
  expiresAt: z.date(),
  status: InviteStatusSchema,
  /** People the link still lets in. */
  usesLeft: z.number().int(),
  /** The team's id when the person asking is in it already (an account made through the link). */
  joinedTeamId: z.string().nullable(),
});
export type InviteInfo = z.infer<typeof InviteInfoSchema>;

export async function createInvite(
  db: Db,
  by: Person,
  teamId: SessionId,
  input: { role: z.infer<typeof InviteRoleSchema>; expiresInHours: number; maxUses?: number },
): Promise<InviteView & { token: string }> {
  const token = newSecret(INVITE_PREFIX);
  return inTx(db, async (tx) => {
    await lockTeam(tx, teamId);
    const open = await tx.teamInvite.count({ where: { teamId, ...openInvite(tx) } });
    if (open >= LIMITS.openInvitesPerTeam) {
      throw new AppError("PEOPLE_LIMIT", `This team has ${LIMITS.openInvitesPerTeam} open invite links: revoke some first`);
    }
    const row = await tx.teamInvite.create({
      data: {
        id: newInviteId(),
        teamId,
        role: input.role,
        tokenHash: secretHash(token),
        createdBy: by.id,
        expiresAt: new Date(Date.now() + input.expiresInHours * 3_600_000),
        maxUses: input.maxUses ?? 1,
      },
    });
    await recordAction(tx, { person: by, teamId }, "invite_created", { detail: { inviteId: row.id, role: input.role, maxUses: row.maxUses } });
    await notifyPeople(tx, teamId);
    return { ...InviteViewSchema.parse({ ...row, createdByName: by.name }), token };
  });
}

/** Open invites (not used, revoked or expired), newest first. */
export async function listInvites(db: DbOrTx, teamId: SessionId): Promise<InviteView[]> {
  const rows = await db.teamInvite.findMany({
    where: { teamId, ...openInvite(db) },
    orderBy: { createdAt: "desc" },
  });
  const names = new Map(
    (await db.user.findMany({ where: { id: { in: rows.map((r) => r.createdBy) } }, select: { id: true, name: true } })).map((u) => [u.id, u.name]),
  );
  return rows.map((r) => InviteViewSchema.parse({ ...r, createdByName: names.get(r.createdBy) ?? "someone" }));
}

export async function revokeInvite(db: Db, by: Person, teamId: SessionId, inviteId: string): Promise<void> {
  await inTx(db, async (tx) => {
    const { count } = await tx.teamInvite.updateMany({
      where: { id: inviteId, teamId, ...openInvite(tx) },
      data: { revokedAt: new Date() },
    });
    if (count === 0) throw new AppError("INVITE_NOT_FOUND", "That invite is not open any more", { inviteId });
    await recordAction(tx, { person: by, teamId }, "invite_revoked", { detail: { inviteId } });
    await notifyPeople(tx, teamId);
  });
}

function statusOf(row: { revokedAt: Date | null; uses: number; maxUses: number; expiresAt: Date }): z.infer<typeof InviteStatusSchema> {
  if (row.uses >= row.maxUses) return "used";
  if (row.revokedAt) return "revoked";
  return row.expiresAt <= new Date() ? "expired" : "valid";
}

async function inviteByToken(db: DbOrTx, token: string) {
  return db.teamInvite.findUnique({ where: { tokenHash: secretHash(token) } });
}

/** What an invite link offers, for the page that opens it (anyone holding the link may see it). */
export async function inviteInfo(db: DbOrTx, token: string, viewerId?: string): Promise<InviteInfo> {
  const row = await inviteByToken(db, token);
  if (!row) throw new AppError("INVITE_NOT_FOUND", "This invite link is not valid");
  const [team, inviter, joined] = await Promise.all([
    db.session.findUnique({ where: { id: row.teamId }, select: { title: true } }),
    db.user.findUnique({ where: { id: row.createdBy }, select: { name: true } }),
    viewerId ? db.teamPerson.findUnique({ where: { teamId_userId: { teamId: row.teamId, userId: viewerId } }, select: { teamId: true } }) : null,
  ]);
  return InviteInfoSchema.parse({
    teamTitle: team?.title ?? "a team",
    role: row.role,
    invitedBy: inviter?.name ?? "someone",
    expiresAt: row.expiresAt,
    status: statusOf(row),
    usesLeft: Math.max(0, row.maxUses - row.uses),
    joinedTeamId: joined?.teamId ?? null,
  });
}

/**
 * One use of the link, if it has one left, for `email` (and the person, once known): the
 * conditional increment admits at most `maxUses` claims however many race for it.
 */
async function claimUse(tx: Tx, inviteId: string, email: string, userId: string | null): Promise<boolean> {
  const { count } = await tx.teamInvite.updateMany({ where: { id: inviteId, ...openInvite(tx) }, data: { uses: { increment: 1 } } });
  if (count === 0) return false;
  await tx.teamInviteUse.create({ data: { inviteId, email: email.toLowerCase(), userId } });
  return true;
}

/**
 * Sign-up with an invite, step 1 (before the account exists): claims one use of the link for
 * the email signing up, so a link makes at most `maxUses` accounts. False when it is not
 * usable (used up, revoked, expired, unknown). A sign-up that fails after the claim leaves the
 * use spent.
 */
export async function claimInviteForSignUp(db: Db, token: string, email: string): Promise<boolean> {
  return inTx(db, async (tx) => {
    const row = await inviteByToken(tx, token);
    return row !== null && (await claimUse(tx, row.id, email, null));
  });
}

/** Step 2 (the account exists): the new person joins the team their claimed use is for. */
export async function joinByClaimedInvite(db: Db, person: Person, token: string): Promise<void> {
  await inTx(db, async (tx) => {
    const row = await inviteByToken(tx, token);
    if (!row) return;
    const teamId = asSessionId(row.teamId);
    await lockTeam(tx, teamId);
    const { count } = await tx.teamInviteUse.updateMany({ where: { inviteId: row.id, email: person.email.toLowerCase(), userId: null }, data: { userId: person.id } });
    if (count === 0 || (await roleIn(tx, teamId, person.id))) return;
    const role = InviteRoleSchema.parse(row.role);
    await tx.teamPerson.create({ data: { teamId, userId: person.id, role } });
    await recordAction(tx, { person, teamId }, "joined", { detail: { role, inviteId: row.id } });
    await notifyPeople(tx, teamId);
  });
}

/**
 * Joins the team with the invite's role: a use of the link is claimed with a conditional
 * update, so people racing for its last use cannot both join. Someone already in the team keeps
 * their role (an invite never demotes) and the link's uses stay as they were.
 */
export async function acceptInvite(db: Db, person: Person, token: string): Promise<TeamAccess> {
  return inTx(db, async (tx) => {
    const row = await inviteByToken(tx, token);
    if (!row) throw new AppError("INVITE_NOT_FOUND", "This invite link is not valid");
    const teamId = asSessionId(row.teamId);
    // One join at a time per team: the same person accepting two links at once joins once.
    await lockTeam(tx, teamId);
    const existing = await roleIn(tx, teamId, person.id);
    if (existing) return { teamId, role: existing };
    const status = statusOf(row);
    if (status !== "valid") throw new AppError("INVITE_NOT_FOUND", `This invite link is ${status}`, { status });
    if (!(await claimUse(tx, row.id, person.email, person.id))) throw new AppError("INVITE_NOT_FOUND", "This invite link was just used up or revoked");
    const role = InviteRoleSchema.parse(row.role);
    await tx.teamPerson.create({ data: { teamId, userId: person.id, role } });
    await recordAction(tx, { person, teamId }, "joined", { detail: { role, inviteId: row.id } });
    await notifyPeople(tx, teamId);
    return { teamId, role };
  });
}

