import { createHash } from "node:crypto";
import { z } from "zod";
import type { Db } from "../db/client";
import { LIMITS } from "../../shared/limits";

// Sign-in attempts per account, beside the library's limit per client address: an attack
// spread over many addresses on one account is slowed too. After a few free attempts each
// further one waits twice as long as the last (capped). Every attempt is counted when it
// starts (so attempts made at once cannot all pass as "free") and a success clears the count.
// The account's owner is never locked out: an address they signed in from before may still try.

/** The throttle's key: the lowercased email's sha256 (an address without an account counts alike). */
const keyOf = (email: string) => createHash("sha256").update(email.trim().toLowerCase()).digest("hex");

const Claimed = z.array(z.object({ attempts: z.number().int() }));
const Waiting = z.array(z.object({ wait_ms: z.number() }));

/**
 * Counts one attempt on the account of `email` from `address`: null when it may go ahead, else
 * the seconds until it may.
 */
export async function claimSignInAttempt(db: Db, email: string, address: string): Promise<number | null> {
  const key = keyOf(email);
  const known = await db.$queryRaw<unknown[]>`SELECT 1 FROM sign_in_addresses a JOIN users u ON u.id = a.user_id
    WHERE lower(u.email) = lower(${email.trim()}) AND a.address = ${address}`;
  if (known.length > 0) return null;
  const { signInFreeAttempts: free, signInBackoffMaxSeconds: max } = LIMITS;
  // The wait before the attempt after this one: none while free, then 1 s, 2 s, 4 s … up to max.
  const claimed = Claimed.parse(
    await db.$queryRaw`INSERT INTO sign_in_throttle AS t (key, attempts, next_attempt_at) VALUES (${key}, 1, now())
      ON CONFLICT (key) DO UPDATE SET attempts = t.attempts + 1,
        next_attempt_at = now() + CASE WHEN t.attempts + 1 < ${free} THEN interval '0'
          ELSE make_interval(secs => least(${max}::float8, power(2, least(t.attempts + 1 - ${free}, 30))::float8)) END
      WHERE t.next_attempt_at <= now()
      RETURNING attempts`,
  );
  if (claimed.length > 0) return null;
  const waiting = Waiting.parse(
    await db.$queryRaw`SELECT greatest(0, extract(epoch FROM next_attempt_at - now()) * 1000)::float8 AS wait_ms FROM sign_in_throttle WHERE key = ${key}`,
  );
  return Math.max(1, Math.ceil((waiting[0]?.wait_ms ?? 1000) / 1000));
}

/** A sign-in succeeded: the account's count clears and the address becomes one it may always try from. */
export async function signInSucceeded(db: Db, user: { id: string; email: string }, address: string): Promise<void> {
  await db.$transaction([
    db.$executeRaw`DELETE FROM sign_in_throttle WHERE key = ${keyOf(user.email)}`,
    db.$executeRaw`INSERT INTO sign_in_addresses (user_id, address, last_success_at) VALUES (${user.id}, ${address}, now())
      ON CONFLICT (user_id, address) DO UPDATE SET last_success_at = now()`,
  ]);
}
