import pg from "pg";
import { Prisma } from "./generated/client";
import { asError, brokenBy, checkout, pipeline, type Settle } from "./pg-pipeline";

// Raw SQL straight on the pg pool the Prisma adapter uses, for the hot paths (the log's appends,
// the mailbox's send, the runtime's per-step reads). A statement through Prisma's client costs
// 3–4× the CPU of the same statement through pg here (its query interpreter and serialisation
// on every call), and the app server's CPU is what limits how many agents it carries
// (docs/DECISIONS.md, Database and live feeds). The statements are the same tagged templates either way: a domain
// function that only needs raw SQL takes a `SqlRunner`, which Prisma's client, its transaction
// client and `PgSql` all are, so it runs inside a caller's Prisma transaction just as well.

/** What raw SQL needs; Prisma's client and transaction client have the same two methods. */
export interface SqlRunner {
  $queryRaw(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): PromiseLike<unknown>;
  $executeRaw(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): PromiseLike<number>;
}

function toSql(query: TemplateStringsArray | Prisma.Sql, values: unknown[]): Prisma.Sql {
  return query instanceof Prisma.Sql ? query : Prisma.sql(query, ...values);
}

/** A SqlRunner whose statements each go through `run` (the two methods, written once). */
export abstract class RunsSql implements SqlRunner {
  protected abstract run(sql: Prisma.Sql): Promise<pg.QueryResult>;

  async $queryRaw(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): Promise<unknown[]> {
    return (await this.run(toSql(query, values))).rows;
  }

  async $executeRaw(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): Promise<number> {
    return (await this.run(toSql(query, values))).rowCount ?? 0;
  }
}

/** Runs statements on a pool (each its own autocommit) or on one checked-out connection (a transaction). */
export class PgSql extends RunsSql {
  constructor(private readonly target: pg.Pool | pg.PoolClient) {
    super();
  }

  protected async run(sql: Prisma.Sql): Promise<pg.QueryResult> {
    return (await this.batch([sql]))[0]!;
  }

  /**
   * The statements in one round trip (Pipeline above), their results in order. On the pool they
   * commit together or not at all; in a transaction they are part of it.
   */
  async batch(queries: Prisma.Sql[]): Promise<pg.QueryResult[]> {
    if (!(this.target instanceof pg.Pool)) return pipeline(this.target, queries);
    const { client, release } = await checkout(this.target);
    let broken: Error | undefined;
    try {
      return await pipeline(client, queries);
    } catch (e) {
      broken = brokenBy(e);
      throw e;
    } finally {
      release(broken);
    }
  }
}

/**
 * Statements one caller needs together, asked for in the same turn of the event loop, sent as
 * one pipeline on one pool connection: one round trip and one implicit transaction, so one
 * commit where each alone would be one (read-only autocommits count as commits too). They
 * commit or fail together, so it is for independent reads: a step's budget and runtime
 * context, a feed's credential and role. A statement asked for later goes in a later round.
 */
export class BatchedSql extends RunsSql {
  private round: { sql: Prisma.Sql; settle: Settle }[] = [];

  constructor(private readonly sql: PgSql) {
    super();
  }

  protected run(sql: Prisma.Sql): Promise<pg.QueryResult> {
    return new Promise((resolve, reject) => {
      this.round.push({ sql, settle: (error, result) => (error ? reject(error) : resolve(result!)) });
      if (this.round.length === 1) setImmediate(() => this.send());
    });
  }

  private send(): void {
    const round = this.round;
    this.round = [];
    this.sql.batch(round.map((r) => r.sql)).then(
      (results) => round.forEach((r, i) => r.settle(null, results[i])),
      (e: unknown) => round.forEach((r) => r.settle(asError(e))),
    );
  }
}

/**
 * A transaction of `sqlTx`: statements on its one connection, committed together. BEGIN and
 * its settings are not sent on their own: they go out in the same round trip as the
 * transaction's first statements, and a transaction that sends nothing sends no BEGIN.
 */
export class SqlTx extends PgSql {
  private opening: Prisma.Sql[] | null;
  private committedWith = false;

  constructor(client: pg.PoolClient, opening: Prisma.Sql[]) {
    super(client);
    this.opening = opening;
  }

  /** Whether BEGIN has gone out (then the transaction must end with COMMIT or ROLLBACK). */
  get begun(): boolean {
    return this.opening === null;
  }

  /** Whether commitWith committed it. */
  get committed(): boolean {
    return this.committedWith;
  }

  override async batch(queries: Prisma.Sql[]): Promise<pg.QueryResult[]> {
    if (this.committedWith) throw new Error("sqlTx: a statement after commitWith");
    const opening = this.opening ?? [];
    this.opening = null;
    return (await super.batch([...opening, ...queries])).slice(opening.length);
  }

  /**
   * The transaction's last statements and its COMMIT in one round trip; nothing may follow.
   * Only for statements whose results cannot change whether the transaction should commit:
   * an error still rolls it all back, but a result is read after the commit.
   */
  async commitWith(queries: Prisma.Sql[]): Promise<pg.QueryResult[]> {
    const results = await this.batch([...queries, Prisma.sql`COMMIT`]);
    this.committedWith = true;
    return results.slice(0, -1);
  }
}

/**
 * How long a transaction may sit idle waiting for this process (as Prisma's interactive
 * transactions time out): a bug that awaits something slow inside one cannot hold its locks.
 */
const TX_IDLE_TIMEOUT_MS = 15_000;

/** What a transaction takes before `fn`'s first statement (in that statement's round trip). */
export interface SqlTxOptions {
  /** lock_timeout for the whole transaction (its waits for locks, the advisory lock's too). */
  lockTimeoutMs?: number;
  /** pg_advisory_xact_lock(classId, hashtext(key)), held until the transaction ends. */
  advisoryLock?: { classId: number; key: string };
}

/** BEGIN and what `opts` asks (SET takes no parameters: the numbers are checked whole). */
function openingStatements(opts: SqlTxOptions): Prisma.Sql[] {
  const out = [Prisma.sql`BEGIN`, Prisma.raw(`SET LOCAL idle_in_transaction_session_timeout = ${TX_IDLE_TIMEOUT_MS}`)];
  if (opts.lockTimeoutMs !== undefined) out.push(Prisma.raw(`SET LOCAL lock_timeout = ${wholeNumber(opts.lockTimeoutMs)}`));
  const lock = opts.advisoryLock;
  if (lock) out.push(Prisma.sql`SELECT pg_advisory_xact_lock(${wholeNumber(lock.classId)}::int, hashtext(${lock.key}))`);
  return out;
}

function wholeNumber(n: number): number {
  if (!Number.isSafeInteger(n)) throw new Error(`Expected a whole number, got ${n}`);
  return n;
}

/**
 * Runs `fn` in a transaction on its own pool connection: BEGIN (with `opts`' settings and
 * lock) rides with `fn`'s first statements, then COMMIT (unless `fn` ended with commitWith),
 * or ROLLBACK when it throws (and the error is rethrown). Given a transaction already, `fn`
 * joins it (then `opts` must be empty: a lock or timeout asked of a transaction already under
 * way would come too late). At most one round trip besides `fn`'s own.
 */
export async function sqlTx<T>(on: pg.Pool | SqlTx, fn: (tx: SqlTx) => Promise<T>, opts: SqlTxOptions = {}): Promise<T> {
  if (on instanceof SqlTx) {
    if (opts.lockTimeoutMs !== undefined || opts.advisoryLock) throw new Error("sqlTx: a lock or lock_timeout needs a transaction of its own");
    return fn(on);
  }
  const opening = openingStatements(opts);
  const { client, release } = await checkout(on);
  const tx = new SqlTx(client, opening);
  let broken: Error | undefined;
  try {
    const result = await fn(tx);
    if (tx.begun && !tx.committed) await client.query("COMMIT");
    return result;
  } catch (e) {
    // A connection that cannot even roll back is not handed out again.
    if (tx.begun && !tx.committed)
      await client.query("ROLLBACK").catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
    throw e;
  } finally {
    release(broken);
  }
}
