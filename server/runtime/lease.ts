import { z } from "zod";
import type { SqlRunner } from "../db/sql";
import { Prisma } from "../db/generated/client";
import { asSessionId, type SessionId } from "../ids";
import { IdRows, type Lease } from "./session-log";

// Exactly one process drives an agent: it holds the lease on the session row. Every
// acquisition bumps the fencing token, and every log append checks it (session-log.ts).

const TokenRow = z.array(z.object({ lease_token: z.number().int() }));

/**
 * The agent (session row `s`) needs a driver: an open turn (left by a crash) or runnable
 * input. The one definition of "this agent will make progress", also used by wait_agent.
 * Input of a team stopped at its budget is not runnable until the budget is raised
 * (team/budget.ts); an open turn still needs a driver to close it, unless it waits for
 * people (runtime/approvals.ts): then nothing drives it until they decide.
 */
export const NEEDS_DRIVER = Prisma.sql`s.status NOT IN ('provisioning', 'failed') AND s.waiting_for IS NULL
  AND (s.active_turn_id IS NOT NULL
       OR (NOT s.parked AND EXISTS (SELECT 1 FROM inbox_items i WHERE i.session_id = s.id)
           AND NOT EXISTS (SELECT 1 FROM teams t WHERE t.id = s.team_id AND t.budget_stopped_at IS NOT NULL)))`;

const FREE = Prisma.sql`(s.lease_owner IS NULL OR s.lease_expires_at < now())`;

/**
 * Takes the lease when it is free (or expired) and the agent has work. Returns null when a
 * live process holds it or there is nothing to do. Each acquisition bumps the fencing token.
 */
export async function acquireLease(
  db: SqlRunner,
  sessionId: SessionId,
  owner: string,
  ttlMs: number,
): Promise<Lease | null> {
  const rows = TokenRow.parse(
    await db.$queryRaw`UPDATE sessions s
      SET lease_owner = ${owner}, lease_token = lease_token + 1,
          lease_expires_at = now() + make_interval(secs => ${ttlMs / 1000})
      WHERE s.id = ${sessionId} AND ${FREE} AND ${NEEDS_DRIVER}
      RETURNING lease_token`,
  );
  const row = rows[0];
  return row ? { owner, token: row.lease_token } : null;
}

/**
 * Heartbeat: extends the leases of the given resident agents (only those: a lease whose driver
 * is gone must expire so another process can adopt the agent). Returns the ids still held.
 */
export async function renewLeases(db: SqlRunner, owner: string, sessionIds: string[], ttlMs: number): Promise<Set<string>> {
  if (sessionIds.length === 0) return new Set();
  const rows = IdRows.parse(
    await db.$queryRaw`UPDATE sessions
      SET lease_expires_at = now() + make_interval(secs => ${ttlMs / 1000})
      WHERE lease_owner = ${owner} AND id = ANY(${sessionIds}::text[])
      RETURNING id`,
  );
  return new Set(rows.map((r) => r.id));
}

/** Gives the lease up (eviction, shutdown). The agent becomes inactive. */
export async function releaseLease(db: SqlRunner, sessionId: SessionId, lease: Lease): Promise<boolean> {
  const n = await db.$executeRaw`UPDATE sessions
    SET lease_owner = NULL, lease_expires_at = NULL,
        status = CASE WHEN status IN ('running', 'idle') THEN 'inactive' ELSE status END
    WHERE id = ${sessionId} AND lease_owner = ${lease.owner} AND lease_token = ${lease.token}`;
  return n === 1;
}

/**
 * Sessions that need a driver but have none alive: an open turn left by a crash, or runnable
 * input. Oldest activity first, so recovery is fair.
 */
export async function findOrphanedSessions(db: SqlRunner, limit = 100): Promise<SessionId[]> {
  const rows = IdRows.parse(
    await db.$queryRaw`SELECT s.id FROM sessions s
      WHERE ${FREE} AND ${NEEDS_DRIVER}
      ORDER BY s.updated_at
      LIMIT ${limit}`,
  );
  return rows.map((r) => asSessionId(r.id));
}
