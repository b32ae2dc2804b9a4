import pg from "pg";
import { Prisma } from "./generated/client";

// pg's protocol under the SqlRunners of sql.ts: statements written in pipelines on one
// connection, each prepared once per connection (or parsed unnamed behind a pooler), results
// built as Prisma's $queryRaw gives them, a broken socket failing only its own statements.

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
export class Pipeline implements pg.Submittable {
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
export interface PreparedStatements {
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
export function preparedOn(connection: object): PreparedStatements {
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
export function serialise(q: Prisma.Sql): unknown[] {
  return q.values.map((v) => prepareValue(param(v)));
}

/**
 * Writes the statements (Parse unless prepared on this connection, Bind, Describe unless its
 * rows are known, Execute) and one Sync after them all, or one after each (`syncEach`: each
 * its own implicit transaction), in one socket write. Gives the statements it prepares, by
 * index, and the known rows of those written without Describe.
 */
export function write(
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

export function pipeline(client: pg.PoolClient, queries: Prisma.Sql[]): Promise<pg.QueryResult[]> {
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
export async function checkout(pool: pg.Pool): Promise<{ client: pg.PoolClient; release(broken?: Error): void }> {
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
export function brokenBy(e: unknown): Error | undefined {
  if (!e) return undefined;
  if (e instanceof pg.DatabaseError && e.severity !== "FATAL" && e.severity !== "PANIC") return undefined;
  return asError(e);
}

export function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/** How a waiting statement learns its outcome. */
export type Settle = (error: Error | null, result?: pg.QueryResult) => void;
