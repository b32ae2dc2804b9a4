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

/** What a result needs of pg's Result beyond its public type (the methods its own Query calls). */
interface ResultBuilder extends pg.QueryResult {
  addFields(fields: unknown[]): void;
  parseRow(fields: unknown[]): Record<string, unknown>;
  addRow(row: Record<string, unknown>): void;
  addCommandComplete(msg: unknown): void;
}
const newResult = () => new pg.Result("object", TYPES as never) as unknown as ResultBuilder;
const prepareValue = (pg as unknown as { utils: { prepareValue(v: unknown): unknown } }).utils.prepareValue;

/**
 * Statements sent as one pipeline of pg's extended protocol (each one's Parse, Bind, Describe
 * and Execute, then one Sync), in one socket write; the server answers in one flush. It is the
 * submittable shape pg's own Query has, for several statements. Outside a transaction block the
 * statements run in the implicit transaction the protocol gives everything before a Sync: they
 * commit together or not at all (the first error skips the rest). Each still reads with a
 * snapshot of its own (READ COMMITTED), so a statement sees what committed while an earlier one
 * waited for a lock.
 */
class Pipeline implements pg.Submittable {
  protected readonly results: ResultBuilder[];
  private index = 0;
  private failed = false;
  /** Statements this pipeline prepares, by index: unconfirmed until it has run. */
  protected preparing: { index: number; text: string }[] = [];
  protected prepared: PreparedStatements | undefined;
  /** A row a type parser could not read. */
  private unreadable: Error | null = null;

  constructor(
    private readonly queries: Prisma.Sql[],
    private readonly done: (error: Error | null, results: pg.QueryResult[]) => void,
  ) {
    this.results = queries.map(newResult);
  }

  /** pg calls this when the connection is free; an error returned is reported to handleError. */
  submit(connection: pg.Connection): Error | null {
    let values: unknown[][];
    try {
      // Serialised before anything is written: a value pg cannot send leaves the wire untouched.
      values = this.queries.map(serialise);
    } catch (e) {
      return asError(e);
    }
    this.prepared = preparedOn(connection);
    const written = write(connection, this.prepared, this.queries, values, false);
    this.preparing = written.preparing;
    written.described.forEach((fields, i) => this.describedAs(i, fields));
    return null;
  }

  /** A statement written without Describe: its rows as an earlier execution described them. */
  protected describedAs(index: number, fields: unknown[] | undefined): void {
    if (fields) this.results[index]!.addFields(fields);
  }

  handleRowDescription(msg: { fields: unknown[] }): void {
    this.results[this.index]?.addFields(msg.fields);
  }

  handleDataRow(msg: { fields: unknown[] }): void {
    const r = this.results[this.index];
    if (!r || this.unreadable) return;
    try {
      r.addRow(r.parseRow(msg.fields));
    } catch (e) {
      // As pg's Query does: the rest of the reply is read, then the error reported.
      this.unreadable = asError(e);
    }
  }

  handleCommandComplete(msg: unknown): void {
    const r = this.results[this.index];
    if (r) {
      r.addCommandComplete(msg);
      // A named statement's rows are described once (no RowDescription means none: fields []).
      const text = this.queries[this.index]!.text;
      if (this.prepared?.byText.has(text) && !this.prepared.fields.has(text)) this.prepared.fields.set(text, r.fields);
    }
    this.index += 1;
  }

  handleEmptyQuery(): void {
    this.index += 1;
  }

  handleError(error: Error): void {
    if (this.failed) return;
    this.failed = true;
    // The server skipped everything after the failing statement (and that one's Parse may have
    // failed): those names are forgotten, so they are prepared afresh under new names.
    for (const p of this.preparing) if (p.index >= this.index) this.prepared?.byText.delete(p.text);
    this.done(error, []);
  }

  handleReadyForQuery(): void {
    if (this.failed) return;
    if (this.unreadable) this.done(this.unreadable, []);
    else this.done(null, this.results);
  }

  handleCopyInResponse(connection: pg.Connection): void {
    (connection as unknown as { sendCopyFail(msg: string): void }).sendCopyFail("COPY is not supported here");
  }

  handleCopyData(): void {}

  handlePortalSuspended(): void {}
}

/**
 * The hot statements are prepared once per connection (a named statement: Postgres parses and
 * plans it once, not on every call), named by this process. A connection prepares at most
 * MAX_PREPARED of them; others (statements whose text varies) run unnamed.
 */
interface PreparedStatements {
  next: number;
  byText: Map<string, string>;
  /**
   * The rows of prepared statements, by text, as their first execution's Describe gave them:
   * later executions skip Describe (the server's RowDescription and pg's reading of it).
   */
  fields: Map<string, unknown[]>;
  /** How many it may prepare (0: none). */
  max: number;
}
const MAX_PREPARED = 256;
const preparedByConnection = new WeakMap<object, PreparedStatements>();
function preparedOn(connection: object): PreparedStatements {
  let p = preparedByConnection.get(connection);
  if (!p) preparedByConnection.set(connection, (p = { next: 0, byText: new Map(), fields: new Map(), max: MAX_PREPARED }));
  return p;
}

/**
 * The pool's connections prepare nothing by name: every statement is parsed unnamed. For a
 * pool through a transaction-mode pooler (PgBouncer), where consecutive transactions of one
 * client connection run on different server connections, which know nothing of each other's
 * named statements.
 */
export function unnamedStatementsOnly(pool: pg.Pool): void {
  pool.on("connect", (client) => {
    const connection = (client as unknown as { connection: object }).connection;
    preparedByConnection.set(connection, { next: 0, byText: new Map(), fields: new Map(), max: 0 });
  });
}

/** A statement's parameters as they go on the wire (throws for a value pg cannot send). */
function serialise(q: Prisma.Sql): unknown[] {
  return q.values.map((v) => prepareValue(param(v)));
}

/**
 * Writes the statements (Parse unless prepared on this connection, Bind, Describe unless its
 * rows are known, Execute) and one Sync after them all, or one after each (`syncEach`: each
 * its own implicit transaction), in one socket write. Gives the statements it prepares, by
 * index, and the known rows of those written without Describe.
 */
function write(
  connection: pg.Connection,
  prepared: PreparedStatements,
  queries: Prisma.Sql[],
  values: unknown[][],
  syncEach: boolean,
): { preparing: { index: number; text: string }[]; described: (unknown[] | undefined)[] } {
  const c = connection as unknown as PipelineConnection;
  const preparing: { index: number; text: string }[] = [];
  const described: (unknown[] | undefined)[] = [];
  c.stream.cork();
  try {
    for (const [i, q] of queries.entries()) {
      let name = prepared.byText.get(q.text);
      if (name === undefined) {
        name = prepared.byText.size < prepared.max ? `at_${prepared.next++}` : "";
        if (name) {
          prepared.byText.set(q.text, name);
          preparing.push({ index: i, text: q.text });
        }
        c.parse({ name, text: q.text, types: [] }, true);
      }
      c.bind({ statement: name, values: values[i]! }, true);
      const fields = name ? prepared.fields.get(q.text) : undefined;
      if (!fields) c.describe({ type: "P", name: "" }, true);
      described.push(fields);
      c.execute({ portal: "", rows: 0 }, true);
      if (syncEach) c.sync();
    }
    if (!syncEach) c.sync();
  } finally {
    c.stream.uncork();
  }
  return { preparing, described };
}

interface PipelineConnection {
  stream: { cork(): void; uncork(): void };
  parse(q: { name: string; text: string; types: unknown[] }, more: boolean): void;
  bind(b: { statement: string; values: unknown[] }, more: boolean): void;
  describe(d: { type: "P"; name: string }, more: boolean): void;
  execute(e: { portal: string; rows: number }, more: boolean): void;
  sync(): void;
}

function pipeline(client: pg.PoolClient, queries: Prisma.Sql[]): Promise<pg.QueryResult[]> {
  return new Promise((resolve, reject) => {
    client.query(new Pipeline(queries, (error, results) => (error ? reject(error) : resolve(results))));
  });
}

/**
 * A pool connection, checked out. While it is, an error event of its socket (the server
 * restarting, the backend terminated) fails the statements in flight and is swallowed here:
 * pg would otherwise make it the process's uncaught error (the pool listens only to idle ones).
 * `release(broken)` hands it back, or drops it when its socket failed.
 */
async function checkout(pool: pg.Pool): Promise<{ client: pg.PoolClient; release(broken?: Error): void }> {
  const client = await pool.connect();
  const ignore = () => undefined;
  client.on("error", ignore);
  return {
    client,
    release(broken) {
      client.removeListener("error", ignore);
      client.release(broken);
    },
  };
}

/**
 * The error that makes a connection unfit to hand out again: its socket failed, or the server
 * ended its session (FATAL). A statement's own error leaves it usable.
 */
function brokenBy(e: unknown): Error | undefined {
  if (!e) return undefined;
  if (e instanceof pg.DatabaseError && e.severity !== "FATAL" && e.severity !== "PANIC") return undefined;
  return asError(e);
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

function toSql(query: TemplateStringsArray | Prisma.Sql, values: unknown[]): Prisma.Sql {
  return query instanceof Prisma.Sql ? query : Prisma.sql(query, ...values);
}

/** A SqlRunner whose statements each go through `run` (the two methods, written once). */
abstract class RunsSql implements SqlRunner {
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
 * Single statements from many callers, each its own transaction (autocommit), coalesced: those
 * asked for in the same turn of the event loop (up to `maxGroup`) go out in one socket write on
 * one connection, each with a Sync of its own, so each commits or fails alone, in the order
 * asked, while this process and the server wake once for all of them (on this machine a socket
 * write and a wake-up cost far more than a small statement: docs/PERFORMANCE.md). Groups run
 * side by side on their own connections: nothing orders one group against another. For
 * frequent statements that may wait for the ones queued before them, such as streamed text's
 * flushes (one in flight per agent).
 */
export class CoalescedSql extends RunsSql {
  private queue: { sql: Prisma.Sql; settle: Settle }[] = [];
  private scheduled = false;
  /** Groups sent, one socket write each (diagnostics). */
  groups = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly maxGroup = 64,
  ) {
    super();
  }

  protected run(sql: Prisma.Sql): Promise<pg.QueryResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ sql, settle: (error, result) => (error ? reject(error) : resolve(result!)) });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        while (this.queue.length > 0) void this.send(this.queue.splice(0, this.maxGroup));
      });
    });
  }

  private async send(asked: { sql: Prisma.Sql; settle: Settle }[]): Promise<void> {
    // Serialised first: a statement with a value pg cannot send fails alone and is not sent.
    const group: { sql: Prisma.Sql; values: unknown[]; settle: Settle }[] = [];
    for (const { sql, settle } of asked) {
      try {
        group.push({ sql, values: serialise(sql), settle });
      } catch (e) {
        settle(asError(e));
      }
    }
    if (group.length === 0) return;
    let connection: Awaited<ReturnType<typeof checkout>>;
    try {
      connection = await checkout(this.pool);
    } catch (e) {
      for (const w of group) w.settle(asError(e));
      return;
    }
    const { client, release } = connection;
    this.groups += 1;
    let broken: Error | undefined;
    const writer = new GroupWriter(group);
    // Each member is handed to the client when the one before it settles (its error or its
    // ReadyForQuery), before pg reads the next message: never two queries queued at once.
    const members: GroupMember[] = group.map(
      (w, i) =>
        new GroupMember(writer, i, w.sql, (error, results) => {
          broken ??= brokenBy(error);
          w.settle(error, results[0]);
          const next = members[i + 1];
          if (next) client.query(next);
          else release(broken);
        }),
    );
    client.query(members[0]!);
  }
}

type Settle = (error: Error | null, result?: pg.QueryResult) => void;

/** Writes a group's statements, each with its own Sync, when its first member is submitted. */
class GroupWriter {
  /** Per statement: the text it prepares on this connection, if any. */
  readonly preparing: (string | null)[];
  /** Per statement: its rows when written without Describe. */
  described: (unknown[] | undefined)[] = [];
  prepared: PreparedStatements | undefined;
  /** Why the group could not be written (then every member fails with it). */
  failed: Error | null = null;

  constructor(private readonly statements: { sql: Prisma.Sql; values: unknown[] }[]) {
    this.preparing = statements.map(() => null);
  }

  write(connection: pg.Connection): void {
    this.prepared = preparedOn(connection);
    const { statements } = this;
    const { preparing, described } = write(connection, this.prepared, statements.map((st) => st.sql), statements.map((st) => st.values), true);
    for (const p of preparing) this.preparing[p.index] = p.text;
    this.described = described;
  }
}

/**
 * One statement of a group, as pg's client sees it: a pipeline of one statement, handed over
 * when the one before it settles. The first writes the whole group; the others write nothing
 * and read their own replies, which follow on the wire in order.
 */
class GroupMember extends Pipeline {
  constructor(
    private readonly writer: GroupWriter,
    private readonly position: number,
    sql: Prisma.Sql,
    done: (error: Error | null, results: pg.QueryResult[]) => void,
  ) {
    super([sql], done);
  }

  override submit(connection: pg.Connection): Error | null {
    try {
      if (this.position === 0) this.writer.write(connection);
    } catch (e) {
      // Not an error of the server's: the connection is dropped with the group.
      this.writer.failed = asError(e);
    }
    // What this statement prepares, so a failure forgets it (Pipeline.handleError).
    this.prepared = this.writer.prepared;
    const text = this.writer.preparing[this.position];
    this.preparing = text ? [{ index: 0, text }] : [];
    this.describedAs(0, this.writer.described[this.position]);
    return this.writer.failed;
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
