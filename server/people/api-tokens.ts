import { z } from "zod";
import { inTx, type Db, type DbOrTx, type Tx } from "../db/client";
import { AppError } from "../errors";
import { recordAudit } from "./audit";
import { LIMITS } from "../../shared/limits";
import { newApiTokenId, type UserId } from "../ids";
import type { UserRow } from "./person";
import { newSecret, secretHash } from "./tokens";

// Personal API tokens: made in the browser, shown once, stored as a sha256, revocable. A
// token acts with its owner's rights, for scripts (docs/SPEC.md §13).

const TOKEN_PREFIX = "at_";
/** lastUsedAt is refreshed at most this often, so a busy script does not write per request. */
const LAST_USED_RESOLUTION_MS = 60_000;

export const ApiTokenViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  createdAt: z.date(),
  lastUsedAt: z.date().nullable(),
});
export type ApiTokenView = z.infer<typeof ApiTokenViewSchema>;

const select = { id: true, name: true, prefix: true, createdAt: true, lastUsedAt: true } as const;

/** Serialises a person's token creations (NO KEY UPDATE: rows that only reference the person wait for nothing). */
async function lockPerson(tx: Tx, userId: UserId): Promise<void> {
  await tx.$queryRaw`SELECT 1 FROM users WHERE id = ${userId} FOR NO KEY UPDATE`;
}

export async function createApiToken(db: DbOrTx, userId: UserId, name: string): Promise<ApiTokenView & { token: string }> {
  const token = newSecret(TOKEN_PREFIX);
  const row = await inTx(db, async (tx) => {
    // Count and insert under the person's lock: concurrent creates cannot both see room for one.
    await lockPerson(tx, userId);
    if ((await tx.apiToken.count({ where: { userId } })) >= LIMITS.apiTokensPerPerson) {
      throw new AppError("PEOPLE_LIMIT", `You have ${LIMITS.apiTokensPerPerson} API tokens: revoke one first`);
    }
    const made = await tx.apiToken.create({
      data: { id: newApiTokenId(), userId, name, tokenHash: secretHash(token), prefix: token.slice(0, TOKEN_PREFIX.length + 6) },
      select,
    });
    await recordAudit(tx, { kind: "api_token_created", actor: await actorOf(tx, userId), detail: { tokenId: made.id, name } });
    return made;
  });
  return { ...ApiTokenViewSchema.parse(row), token };
}

export async function listApiTokens(db: DbOrTx, userId: UserId): Promise<ApiTokenView[]> {
  const rows = await db.apiToken.findMany({ where: { userId }, orderBy: { createdAt: "desc" }, select });
  return rows.map((r) => ApiTokenViewSchema.parse(r));
}

export async function revokeApiToken(db: DbOrTx, userId: UserId, id: string): Promise<void> {
  await inTx(db, async (tx) => {
    const { count } = await tx.apiToken.deleteMany({ where: { id, userId } });
    if (count === 0) throw new AppError("API_TOKEN_NOT_FOUND", `No API token ${id}`, { id });
    await recordAudit(tx, { kind: "api_token_revoked", actor: await actorOf(tx, userId), detail: { tokenId: id } });
  });
}

/** Ends every API token of the person (sign out everywhere, a password change that asks it); how many there were. */
export async function revokeAllApiTokens(db: DbOrTx, userId: UserId): Promise<number> {
  return inTx(db, async (tx) => {
    const { count } = await tx.apiToken.deleteMany({ where: { userId } });
    if (count > 0) await recordAudit(tx, { kind: "api_token_revoked", actor: await actorOf(tx, userId), detail: { all: true, count } });
    return count;
  });
}

/** The person as the audit log names them. */
async function actorOf(tx: Tx, userId: UserId): Promise<{ id: string; name: string }> {
  const user = await tx.user.findUnique({ where: { id: userId }, select: { name: true } });
  return { id: userId, name: user?.name ?? "unknown" };
}

/** The token's id and its owner, or null for an unknown (or revoked) token. */
export async function tokenOwner(db: Db, token: string): Promise<{ tokenId: string; user: UserRow } | null> {
  const row = await db.apiToken.findUnique({
    where: { tokenHash: secretHash(token) },
    select: { id: true, lastUsedAt: true, user: { select: { id: true, name: true, email: true, instanceOwner: true } } },
  });
  if (!row) return null;
  const now = Date.now();
  if (!row.lastUsedAt || now - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    await db.apiToken.updateMany({ where: { id: row.id }, data: { lastUsedAt: new Date(now) } });
  }
  return { tokenId: row.id, user: row.user };
}
