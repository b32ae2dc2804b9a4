import { z } from "zod";
import type { Db, DbOrTx } from "../db/client";
import { asUserId, type UserId } from "../ids";
import type { Auth } from "./auth";
import { tokenOwner } from "./api-tokens";
import { bearerToken } from "./tokens";

// Who is asking: a person signed in with a session cookie, or a script with one of the
// person's API tokens (`Authorization: Bearer`). Either acts with the person's rights.

/** A person as recorded on an action: the id, and the display name at that time. */
export const PersonRefSchema = z.object({ id: z.string(), name: z.string() });
export type PersonRef = z.infer<typeof PersonRefSchema>;

export interface Person {
  id: UserId;
  name: string;
  email: string;
  instanceOwner: boolean;
  /** What signed the request in: long-lived feeds re-check it (sign-out everywhere ends them). */
  credential?: { kind: "session"; id: string } | { kind: "token"; id: string };
}

export const ref = (p: Person): PersonRef => ({ id: p.id, name: p.name });

/** The user columns a Person is made of. */
export interface UserRow {
  id: string;
  name: string;
  email: string;
  instanceOwner: boolean | null;
}

function personOf(user: UserRow, credential: Person["credential"]): Person {
  return { id: asUserId(user.id), name: user.name, email: user.email, instanceOwner: user.instanceOwner === true, credential };
}

/** The person behind a request's headers, or null for an anonymous (or badly signed) one. */
export async function personFromHeaders(auth: Auth, db: Db, headers: Headers): Promise<Person | null> {
  const authorization = headers.get("authorization");
  if (authorization) {
    const token = bearerToken(authorization);
    const owner = token ? await tokenOwner(db, token) : null;
    return owner ? personOf(owner.user, { kind: "token", id: owner.tokenId }) : null;
  }
  const found = await auth.api.getSession({ headers });
  if (!found) return null;
  return personOf({ ...found.user, instanceOwner: found.user.instanceOwner ?? null }, { kind: "session", id: found.session.id });
}

/** The credential still holds: its session row is not revoked or expired, its token not revoked. */
export async function credentialHolds(db: DbOrTx, person: Person): Promise<boolean> {
  const c = person.credential;
  if (!c) return true;
  if (c.kind === "token") return (await db.apiToken.count({ where: { id: c.id, userId: person.id } })) > 0;
  return (await db.authSession.count({ where: { id: c.id, userId: person.id, expiresAt: { gt: new Date() } } })) > 0;
}
