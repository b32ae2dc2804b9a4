import { randomBytes } from "node:crypto";
import type { Db } from "../db/client";
import { asUserId } from "../ids";
import type { Person } from "../people/person";

// People for tests. In-process tests (createCaller) get a user row directly; HTTP tests sign
// up through Better Auth like a browser (same origin), and keep the session cookie.

export async function createTestPerson(db: Db, name: string): Promise<Person> {
  const id = `usr_${randomBytes(6).toString("hex")}`;
  const email = `${name.toLowerCase().replace(/[^a-z0-9]+/g, ".")}.${id}@example.test`;
  await db.user.create({ data: { id, name, email } });
  return { id: asUserId(id), name, email, instanceOwner: false };
}

export interface HttpPerson {
  cookie: string;
  name: string;
  email: string;
}

/** Signs up through /api/auth as the app's own page would; returns the session cookie. */
export async function signUpOverHttp(
  baseUrl: string,
  who: { name: string; email?: string; password?: string; inviteToken?: string },
): Promise<HttpPerson> {
  const email = who.email ?? `${who.name.toLowerCase().replace(/[^a-z0-9]+/g, ".")}.${randomBytes(4).toString("hex")}@example.test`;
  const res = await fetch(`${baseUrl}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: baseUrl },
    body: JSON.stringify({ name: who.name, email, password: who.password ?? "correct horse battery", inviteToken: who.inviteToken }),
  });
  if (!res.ok) throw new Error(`sign-up failed: ${res.status} ${await res.text()}`);
  return { cookie: sessionCookie(res), name: who.name, email };
}

/** The cookie pairs a response set, as a Cookie request header. */
export function sessionCookie(res: Response): string {
  return res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0]!)
    .join("; ");
}
