import { z } from "zod";
import { inTx, type Db, type DbOrTx, type Tx } from "../db/client";
import { AppError } from "../errors";
import { asSessionId, newInviteId, type SessionId } from "../ids";
import { LIMITS } from "../../shared/limits";
import { lockTeam } from "../members/membership";
import { recordAction } from "./actions";
import { TeamRoleSchema } from "./roles";
import type { Person } from "./person";
import { newSecret, secretHash } from "./tokens";
import { openInvite, peopleChanged, roleIn, type TeamAccess } from "./team-people";

// Invite links (docs/SPEC.md §13): a link gives a role (never owner) to up to its number of
// uses until it expires or is revoked; a use is claimed in the joining transaction.

const INVITE_PREFIX = "inv_";
export const INVITE_DEFAULT_HOURS = 72;
export const INVITE_MAX_HOURS = 30 * 24;
export const InviteRoleSchema = TeamRoleSchema.exclude(["owner"]);
/** An invite link's secret as requests carry it (sign-up body, accept, preview). */
export const InviteTokenSchema = z.string().min(1).max(128);


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
    await peopleChanged(tx, teamId);
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
    await peopleChanged(tx, teamId);
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
    await peopleChanged(tx, teamId);
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
    await peopleChanged(tx, teamId);
    return { teamId, role };
  });
}

