import type { Db } from "../db/client";

// Race tests hold a window open with a transaction and wait, here, until the racing calls are
// queued behind its locks: deterministic, no sleeping.

/** How many backends of this database wait on a lock right now. */
export async function lockWaiters(db: Db): Promise<number> {
  const rows = await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock'`;
  return rows[0]?.n ?? 0;
}
