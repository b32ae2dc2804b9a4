import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient, type Prisma } from "./generated/client";
import { CoalescedSql } from "./coalesced-sql";
import { unnamedStatementsOnly } from "./pg-pipeline";
import { PgSql, sqlTx, type SqlTx, type SqlTxOptions } from "./sql";

/**
 * The process's database: Prisma's client, plus `sql` (raw statements straight on the same pg
 * pool, for the hot paths: db/sql.ts), `sqlCoalesced` (single statements of many callers sent
 * together, each its own transaction: db/coalesced-sql.ts) and `sqlTx` (a transaction of such
 * statements).
 */
export type Db = PrismaClient & {
  readonly sql: PgSql;
  readonly sqlCoalesced: CoalescedSql;
  sqlTx<T>(fn: (tx: SqlTx) => Promise<T>, opts?: SqlTxOptions): Promise<T>;
  /** The pool's connections now (metrics): open, idle, callers waiting for one, and the most it opens. */
  poolUse(): { total: number; idle: number; waiting: number; max: number };
};
/** The client handed to `$transaction(async (tx) => …)` callbacks. */
export type Tx = Omit<PrismaClient, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;
export type DbOrTx = Db | Tx;

/**
 * Where the database is. `url` carries the app's statements, perhaps through a transaction-mode
 * pooler (PgBouncer: consecutive transactions of one client connection may run on different
 * server connections); `directUrl` reaches the server itself, for what a pooler cannot carry
 * (LISTEN, the migrations' session lock). Without `directUrl`, `url` is direct.
 */
export interface DatabaseUrls {
  url: string;
  directUrl?: string;
}

export const directUrlOf = (database: DatabaseUrls): string => database.directUrl ?? database.url;

/** As the environment gives them (DATABASE_URL, DIRECT_DATABASE_URL), e.g. to a child process. */
export function databaseEnv(database: DatabaseUrls): { DATABASE_URL: string; DIRECT_DATABASE_URL?: string } {
  return { DATABASE_URL: database.url, ...(database.directUrl ? { DIRECT_DATABASE_URL: database.directUrl } : {}) };
}

/** The environment's database (DATABASE_URL required). */
export function databaseFromEnv(env: { DATABASE_URL?: string; DIRECT_DATABASE_URL?: string }): DatabaseUrls {
  if (!env.DATABASE_URL) throw new Error("DATABASE_URL is required");
  return { url: env.DATABASE_URL, ...(env.DIRECT_DATABASE_URL ? { directUrl: env.DIRECT_DATABASE_URL } : {}) };
}

/**
 * One client per process; Prisma's adapter and `sql` share one pg pool of `poolSize` connections.
 * Through a pooler nothing outlives a transaction on a connection: no named prepared statements
 * (Prisma's adapter names none; db/pg-pipeline.ts then names none either).
 */
export function createDb(database: DatabaseUrls, poolSize = 10): Db {
  const pool = new pg.Pool({ connectionString: database.url, max: poolSize });
  if (directUrlOf(database) !== database.url) unnamedStatementsOnly(pool);
  // An idle connection that dies (a restarted or dropped database) leaves the pool; the next
  // statement opens a new one. Unhandled, pg would make it the process's uncaught error.
  pool.on("error", () => undefined);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  const disconnect = prisma.$disconnect.bind(prisma);
  let ended: Promise<void> | null = null;
  return Object.assign(prisma, {
    sql: new PgSql(pool),
    sqlCoalesced: new CoalescedSql(pool),
    sqlTx: <T>(fn: (tx: SqlTx) => Promise<T>, opts?: SqlTxOptions) => sqlTx(pool, fn, opts),
    poolUse: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: poolSize }),
    // The pool is ours, not the adapter's: it ends with the client, once.
    $disconnect: () => (ended ??= disconnect().then(() => pool.end())),
  });
}

/**
 * Run `fn` in a transaction; given a transaction already, `fn` joins it (so a domain function
 * can be part of a caller's bigger transaction, e.g. a tool effect committed with its result).
 * Never hold one across a model call (Prisma's 5 s timeout).
 */
export function inTx<T>(db: DbOrTx, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if (!("$transaction" in db)) return fn(db);
  return db.$transaction(fn, { maxWait: 10_000, timeout: 15_000 });
}

/** Values that went through zod are plain JSON; Prisma's Json input type cannot see that. */
export function asJson(value: unknown): Prisma.InputJsonValue {
  return value as Prisma.InputJsonValue;
}
