import { z } from "zod";
import type { Db } from "../db/client";
import type { SqlRunner } from "../db/sql";
import { asUserId, type UserId } from "../ids";
import type { Auth } from "./auth";
import { tokenOwner } from "./api-tokens";
import { bearerToken } from "./tokens";

// Who is asking: a person signed in with a session cookie, or a script with one of the
// person's API tokens (`Authorization: Bearer`). Either acts with the person's rights.

export interface Person {
  id: UserId;
  name: string;
  email: string;
  instanceOwner: boolean;
  /** What signed the request in: long-lived feeds re-check it (sign-out everywhere ends them). */
  credential?: { kind: "session"; id: string } | { kind: "token"; id: string };
}

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

const HeldRows = z.array(z.object({ held: z.number() }));

/** The credential still holds: its session row is not revoked or expired, its token not revoked. */
export async function credentialHolds(db: SqlRunner, person: Person): Promise<boolean> {
  const c = person.credential;
  if (!c) return true;
  // Raw statements: every live feed asks this every FEED_REREAD_MS.
  const rows =
    c.kind === "token"
      ? await db.$queryRaw`SELECT 1 AS held FROM api_tokens WHERE id = ${c.id} AND user_id = ${person.id}`
      : await db.$queryRaw`SELECT 1 AS held FROM auth_sessions WHERE id = ${c.id} AND user_id = ${person.id} AND expires_at > now()`;
  return HeldRows.parse(rows).length > 0;
}
