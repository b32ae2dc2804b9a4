import pg from "pg";
import { Prisma } from "./generated/client";

// Raw SQL straight on the pg pool the Prisma adapter uses, for the hot paths (the log's appends,
// the mailbox's send, the runtime's per-step reads). A statement through Prisma's client costs
// 3–4× the CPU of the same statement through pg here (its query interpreter and serialisation
// on every call), and the app server's CPU is what limits how many agents it carries
// (docs/PERFORMANCE.md). The statements are the same tagged templates either way: a domain
// function that only needs raw SQL takes a `SqlRunner`, which Prisma's client, its transaction
// client and `PgSql` all are, so it runs inside a caller's Prisma transaction just as well.

/** What raw SQL needs; Prisma's client and transaction client have the same two methods. */
export interface SqlRunner {
  $queryRaw(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): PromiseLike<unknown>;
  $executeRaw(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): PromiseLike<number>;
}

// Result values as Prisma's $queryRaw gives them (so a row's zod schema reads either alike):
// bigint columns as bigint, numeric as text. timestamptz, json(b), integers, booleans and arrays
// are already the same in pg's defaults.
const INT8 = 20;
const NUMERIC = 1700;
const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") => {
    if (oid === INT8) return (v: string) => BigInt(v);
    if (oid === NUMERIC) return (v: string) => v;
    return pg.types.getTypeParser(oid, format);
  }) as pg.CustomTypesConfig["getTypeParser"],
};

/**
 * A parameter as the adapter would send it: Dates as UTC ISO text (timestamptz reads them the
 * same whatever the process's time zone), everything else as pg serialises it (arrays as array
 * literals, objects as JSON).
 */
function param(value: unknown): unknown {
  return value instanceof Date ? value.toISOString() : value;
}

/** Runs statements on a pool (each its own autocommit) or on one checked-out connection (a transaction). */
export class PgSql implements SqlRunner {
  constructor(private readonly target: pg.Pool | pg.PoolClient) {}

  private async run(query: TemplateStringsArray | Prisma.Sql, values: unknown[]): Promise<pg.QueryResult> {
    const sql = query instanceof Prisma.Sql ? query : Prisma.sql(query, ...values);
    return this.target.query({ text: sql.text, values: sql.values.map(param), types: TYPES });
  }

  async $queryRaw(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): Promise<unknown[]> {
    return (await this.run(query, values)).rows;
  }

  async $executeRaw(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): Promise<number> {
    return (await this.run(query, values)).rowCount ?? 0;
  }
}

/** A transaction of `sqlTx`: statements on its one connection, committed together. */
export class SqlTx extends PgSql {}

/**
 * How long a transaction may sit idle waiting for this process (as Prisma's interactive
 * transactions time out): a bug that awaits something slow inside one cannot hold its locks.
 */
const TX_IDLE_TIMEOUT_MS = 15_000;

/** What a transaction takes in its first round trip, before `fn` runs. */
export interface SqlTxOptions {
  /** lock_timeout for the whole transaction (its waits for locks, the advisory lock's too). */
  lockTimeoutMs?: number;
  /** pg_advisory_xact_lock(classId, hashtext(key)), held until the transaction ends. */
  advisoryLock?: { classId: number; key: string };
}

/** The transaction's first round trip: BEGIN and what `opts` asks, as one simple-protocol query. */
function beginSql(opts: SqlTxOptions): string {
  const parts = ["BEGIN", `SET LOCAL idle_in_transaction_session_timeout = ${TX_IDLE_TIMEOUT_MS}`];
  if (opts.lockTimeoutMs !== undefined) parts.push(`SET LOCAL lock_timeout = ${wholeNumber(opts.lockTimeoutMs)}`);
  // The simple protocol takes no parameters: the key is quoted by pg's own literal escaping.
  const lock = opts.advisoryLock;
  if (lock) parts.push(`SELECT pg_advisory_xact_lock(${wholeNumber(lock.classId)}::int, hashtext(${pg.escapeLiteral(lock.key)}))`);
  return parts.join("; ");
}

function wholeNumber(n: number): number {
  if (!Number.isSafeInteger(n)) throw new Error(`Expected a whole number, got ${n}`);
  return n;
}

/**
 * Runs `fn` in a transaction on its own pool connection: BEGIN (with `opts`' settings and
 * lock, in the same round trip), `fn`'s statements, COMMIT (or ROLLBACK when it throws, and the
 * error is rethrown). Given a transaction already, `fn` joins it (then `opts` must be empty:
 * a lock or timeout asked of a transaction already under way would come too late).
 * Two round trips besides `fn`'s own, where a Prisma interactive transaction costs the same
 * round trips at several times the CPU.
 */
export async function sqlTx<T>(on: pg.Pool | SqlTx, fn: (tx: SqlTx) => Promise<T>, opts: SqlTxOptions = {}): Promise<T> {
  if (on instanceof SqlTx) {
    if (opts.lockTimeoutMs !== undefined || opts.advisoryLock) throw new Error("sqlTx: a lock or lock_timeout needs a transaction of its own");
    return fn(on);
  }
  const client = await on.connect();
  let broken: Error | undefined;
  try {
    await client.query(beginSql(opts));
    const result = await fn(new SqlTx(client));
    await client.query("COMMIT");
    return result;
  } catch (e) {
    // A connection that cannot even roll back is not handed out again.
    await client.query("ROLLBACK").catch((rollbackError: unknown) => {
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    });
    throw e;
  } finally {
    client.release(broken);
  }
}
