// Telling a database that went away from one that said no. A temporary failure (connection
// lost, server shutting down, pool or lock timeout, serialization conflict) may succeed when
// retried; anything else is the database refusing the change, and retrying will not help.

const TRANSIENT_SQLSTATE = /^(08|53|57P0[1-3]|40001|40P01|55P03)/;
// Not P2028 as such: it also covers a transaction that ran past its timeout, which would fail
// the same way again; only "unable to start a transaction" (a busy pool) is temporary.
const TRANSIENT_PRISMA = new Set(["P1001", "P1002", "P1008", "P1017", "P2024", "P2034"]);
const TRANSIENT_NODE = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EAI_AGAIN", "ENOTFOUND"]);
const TRANSIENT_TEXT =
  /connection terminated|connection (?:refused|reset|closed)|terminating connection|database system is (?:shutting down|starting up|in recovery mode)|can't reach database|timed out fetching a new connection|unable to start a transaction|server closed the connection/i;

/** Every code-like string and message on the error and its causes. */
function* facts(e: unknown, depth = 0): Generator<string> {
  if (depth > 5 || e === null || typeof e !== "object") return;
  const o = e as Record<string, unknown>;
  for (const key of ["code", "originalCode", "errno", "message", "originalMessage"]) {
    if (typeof o[key] === "string") yield o[key];
  }
  yield* facts(o.cause, depth + 1);
  yield* facts(o.meta, depth + 1);
  if (o.meta && typeof o.meta === "object") yield* facts((o.meta as Record<string, unknown>).driverAdapterError, depth + 1);
}

export function isTransientDbError(e: unknown): boolean {
  for (const f of facts(e)) {
    if (TRANSIENT_PRISMA.has(f) || TRANSIENT_NODE.has(f) || TRANSIENT_TEXT.test(f)) return true;
    if (/^[0-9A-Z]{5}$/.test(f) && TRANSIENT_SQLSTATE.test(f)) return true;
  }
  return false;
}

/** The SQLSTATE a database error carries (e.g. `2201B`), wherever the driver put it (not Prisma's own P1xxx–P6xxx). */
export function sqlStateOf(e: unknown): string | undefined {
  for (const f of facts(e)) if (/^[0-9A-Z]{5}$/.test(f) && /\d/.test(f) && !/^P[1-6]\d{3}$/.test(f)) return f;
  return undefined;
}
