import pg from "pg";
import { Prisma } from "./generated/client";
import { RunsSql } from "./sql";
import { asError, brokenBy, checkout, Pipeline, preparedOn, serialise, write, type PreparedStatements, type Settle } from "./pg-pipeline";

/**
 * Single statements from many callers, each its own transaction (autocommit), coalesced: those
 * asked for in the same turn of the event loop (up to `maxGroup`) go out in one socket write on
 * one connection, each with a Sync of its own, so each commits or fails alone, in the order
 * asked, while this process and the server wake once for all of them (on this machine a socket
 * write and a wake-up cost far more than a small statement: docs/DECISIONS.md). Groups run
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
