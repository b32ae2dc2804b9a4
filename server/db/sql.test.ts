import pg from "pg";
import { afterAll, beforeAll, describe, expect, vi } from "vitest";
import { databaseTest } from "../testing/fixtures";
import { startPgBouncer, type PgBouncer } from "../testing/pgbouncer";
import { createDb, type DatabaseUrls, type Db, directUrlOf } from "./client";
import { Prisma } from "./generated/client";
import { BatchedSql, sqlTx } from "./sql";
import { testServerUrl } from "../testing/temporary-db";

const it = databaseTest();

/** The ids in a test table, in order. */
const idsIn = async (db: Db, table: string) => ((await db.sql.$queryRaw`SELECT id FROM ${Prisma.raw(table)} ORDER BY id`) as { id: number }[]).map((r) => r.id);
/** The database with its direct URL only (prepared statements are a direct connection's). */
const direct = (tdb: DatabaseUrls): DatabaseUrls => ({ url: directUrlOf(tdb) });

describe("db.sql (raw statements on the adapter's pool)", () => {
  it("reads and binds values as Prisma's $queryRaw does", async ({ db }) => {
    const at = new Date("2026-12-02T06:15:20.123Z");
    const query = (run: typeof db.sql | typeof db) =>
      run.$queryRaw`SELECT ${42}::int AS i, ${"9007199254740993"}::bigint AS big, ${"1.50"}::numeric AS num,
        ${at}::timestamptz AS at, ${JSON.stringify({ b: [1, "x"], a: null })}::jsonb AS doc,
        ${["a", "b,c", 'd"e']}::text[] AS arr, ${true}::boolean AS yes, ${null}::text AS nothing, 'é€'::text AS utf8`;
    const [viaPg] = (await query(db.sql)) as Record<string, unknown>[];
    const [viaPrisma] = (await query(db)) as Record<string, unknown>[];
    expect(viaPg).toEqual({
      i: 42,
      big: 9007199254740993n,
      num: "1.50",
      at,
      doc: { a: null, b: [1, "x"] },
      arr: ["a", "b,c", 'd"e'],
      yes: true,
      nothing: null,
      utf8: "é€",
    });
    // Prisma reads numeric as a Decimal; everything else is the same value.
    expect({ ...viaPrisma, num: String(viaPrisma!.num) }).toEqual({ ...viaPg, num: "1.5" });
  });

  it("takes nested fragments and counts affected rows", async ({ db }) => {
    await db.sql.$executeRaw`CREATE TABLE sql_test_rows (id int PRIMARY KEY, v text)`;
    const v = Prisma.sql`${"x"}`;
    expect(await db.sql.$executeRaw`INSERT INTO sql_test_rows SELECT g, ${v} FROM generate_series(1, ${3}::int) g`).toBe(3);
    expect(await db.sql.$executeRaw(Prisma.sql`UPDATE sql_test_rows SET v = ${"y"} WHERE id > ${1}`)).toBe(2);
    expect(await db.sql.$queryRaw`SELECT id, v FROM sql_test_rows ORDER BY id`).toEqual([
      { id: 1, v: "x" },
      { id: 2, v: "y" },
      { id: 3, v: "y" },
    ]);
  });

  it("commits a transaction's statements together, rolls them all back when it throws, and joins an open one", async ({ db }) => {
    await db.sql.$executeRaw`CREATE TABLE sql_test_tx (id int PRIMARY KEY)`;
    const ids = () => idsIn(db, "sql_test_tx");

    await expect(
      db.sqlTx(async (tx) => {
        await tx.$executeRaw`INSERT INTO sql_test_tx VALUES (1)`;
        // Not visible outside before COMMIT.
        expect(await ids()).toEqual([]);
        await sqlTx(tx, (joined) => joined.$executeRaw`INSERT INTO sql_test_tx VALUES (2)`);
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    expect(await ids()).toEqual([]);

    // A failed statement aborts the transaction: nothing of it commits.
    await expect(
      db.sqlTx(async (tx) => {
        await tx.$executeRaw`INSERT INTO sql_test_tx VALUES (3)`;
        await tx.$executeRaw`INSERT INTO sql_test_tx VALUES (3)`;
      }),
    ).rejects.toThrow(/duplicate key/);
    expect(await ids()).toEqual([]);

    expect(
      await db.sqlTx(async (tx) => {
        await tx.$executeRaw`INSERT INTO sql_test_tx VALUES (4)`;
        await sqlTx(tx, (joined) => joined.$executeRaw`INSERT INTO sql_test_tx VALUES (5)`);
        return "done";
      }),
    ).toBe("done");
    expect(await ids()).toEqual([4, 5]);
  });

  it("hands every connection back: more transactions than the pool has connections, some failing", async ({ tdb }) => {
    const small = createDb(tdb, 2);
    try {
      const outcomes = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) =>
          small.sqlTx(async (tx) => {
            await tx.$queryRaw`SELECT pg_sleep(0.005)`;
            if (i % 3 === 0) throw new Error(`no ${i}`);
            return i;
          }),
        ),
      );
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(13);
      // Both of the pool's connections are usable (none left in a transaction) and Prisma shares them.
      const inTx = await Promise.all([
        small.sql.$queryRaw`SELECT count(*)::int AS open FROM pg_stat_activity
          WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
        small.$queryRaw`SELECT 1 AS one`,
      ]);
      expect(inTx).toEqual([[{ open: 0 }], [{ one: 1 }]]);
    } finally {
      await small.$disconnect();
    }
    // Disconnecting ends the shared pool (twice is harmless).
    await small.$disconnect();
    await expect(small.sql.$queryRaw`SELECT 1`).rejects.toThrow();
  });

  it("takes an advisory lock and lock_timeout in the first round trip: held until the end, a waiter times out", async ({ db }) => {
    const key = "ses_it's \\ a key";
    const lock = { classId: 0x6d626f78, key };
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = db.sqlTx(async (tx) => {
      // The lock is the quoted key's: the same hashtext a parameter gives.
      const rows = await tx.$queryRaw`SELECT count(*)::int AS n FROM pg_locks
        WHERE locktype = 'advisory' AND classid = ${lock.classId}::int::oid AND objid = hashtext(${key})::oid AND pid = pg_backend_pid()`;
      expect(rows).toEqual([{ n: 1 }]);
      locked();
      await held;
      return "committed";
    }, { advisoryLock: lock });
    await isLocked;
    // Another transaction on the same key waits; with a lock_timeout it gives up (55P03).
    // (The lock goes out with the transaction's first statement.)
    await expect(db.sqlTx((tx) => tx.$queryRaw`SELECT 1`, { advisoryLock: lock, lockTimeoutMs: 50 })).rejects.toMatchObject({ code: "55P03" });
    release();
    expect(await holder).toBe("committed");
    // Released at COMMIT: the next one takes it at once.
    expect(await db.sqlTx(async (tx) => (await tx.$queryRaw`SELECT 'next' AS v`)[0], { advisoryLock: lock, lockTimeoutMs: 50 })).toEqual({ v: "next" });
    await expect(db.sqlTx(async () => "x", { lockTimeoutMs: 1.5 })).rejects.toThrow("whole number");
    // Joining a transaction cannot take its lock first: refused, not silently skipped.
    await expect(db.sqlTx((tx) => sqlTx(tx, async () => "x", { advisoryLock: lock }))).rejects.toThrow("a transaction of its own");
  });

  it("runs a batch in one round trip: results in order, all or nothing on the pool, part of a transaction in one", async ({ db }) => {
    await db.sql.$executeRaw`CREATE TABLE sql_test_batch (id int PRIMARY KEY)`;
    const ids = async () => ((await db.sql.$queryRaw`SELECT id FROM sql_test_batch ORDER BY id`) as { id: number }[]).map((r) => r.id);
    const [a, b, c] = await db.sql.batch([
      Prisma.sql`INSERT INTO sql_test_batch VALUES (${1}), (${2})`,
      Prisma.sql`SELECT count(*)::int AS n, ${"x"}::text AS t FROM sql_test_batch`,
      Prisma.sql`UPDATE sql_test_batch SET id = id WHERE id > ${5}`,
    ]);
    expect([a!.rowCount, b!.rows, c!.rowCount]).toEqual([2, [{ n: 2, t: "x" }], 0]);
    // One Sync for all of them: the first error rolls back what came before it and skips the rest.
    await expect(
      db.sql.batch([Prisma.sql`INSERT INTO sql_test_batch VALUES (3)`, Prisma.sql`INSERT INTO sql_test_batch VALUES (1)`, Prisma.sql`INSERT INTO sql_test_batch VALUES (4)`]),
    ).rejects.toMatchObject({ code: "23505" });
    expect(await ids()).toEqual([1, 2]);
    // A value pg cannot serialise is refused before anything is sent; the connection stays usable.
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await expect(db.sql.batch([Prisma.sql`SELECT ${circular}::jsonb`])).rejects.toThrow();
    expect(await db.sql.batch([])).toEqual([]);
    // In a transaction, a batch is part of it: rolled back with it.
    await expect(
      db.sqlTx(async (tx) => {
        await tx.batch([Prisma.sql`INSERT INTO sql_test_batch VALUES (5)`, Prisma.sql`INSERT INTO sql_test_batch VALUES (6)`]);
        expect(await tx.$queryRaw`SELECT count(*)::int AS n FROM sql_test_batch`).toEqual([{ n: 4 }]);
        throw new Error("no");
      }),
    ).rejects.toThrow("no");
    expect(await ids()).toEqual([1, 2]);
  });

  it("commitWith sends a transaction's last statements with its COMMIT; an error there rolls it all back", async ({ db }) => {
    await db.sql.$executeRaw`CREATE TABLE sql_test_last (id int PRIMARY KEY)`;
    const ids = () => idsIn(db, "sql_test_last");
    await expect(
      db.sqlTx(async (tx) => {
        await tx.$executeRaw`INSERT INTO sql_test_last VALUES (1)`;
        await tx.commitWith([Prisma.sql`INSERT INTO sql_test_last VALUES (1)`]);
      }),
    ).rejects.toMatchObject({ code: "23505" });
    expect(await ids()).toEqual([]);
    const out = await db.sqlTx(async (tx) => {
      await tx.$executeRaw`INSERT INTO sql_test_last VALUES (1)`;
      const [r] = await tx.commitWith([Prisma.sql`INSERT INTO sql_test_last VALUES (2) RETURNING id`]);
      // Committed already: visible from another connection before sqlTx returns.
      expect(await ids()).toEqual([1, 2]);
      await expect(tx.$executeRaw`INSERT INTO sql_test_last VALUES (3)`).rejects.toThrow("after commitWith");
      return r!.rows;
    });
    expect(out).toEqual([{ id: 2 }]);
    expect(await ids()).toEqual([1, 2]);
    // A transaction that sends nothing never begins (no BEGIN, no COMMIT) and leaves no trace.
    expect(await db.sqlTx(async (tx) => tx.begun)).toBe(false);
  });

  it("fails a statement or transaction whose backend dies, without an uncaught error, and opens a new connection after", async ({ tdb }) => {
    const one = createDb(tdb, 1);
    try {
      await expect(one.sql.$queryRaw`SELECT pg_terminate_backend(pg_backend_pid())`).rejects.toThrow();
      await expect(one.sqlTx((tx) => tx.$queryRaw`SELECT pg_terminate_backend(pg_backend_pid())`)).rejects.toThrow();
      expect(await one.sql.$queryRaw`SELECT ${1}::int AS n`).toEqual([{ n: 1 }]);
    } finally {
      await one.$disconnect();
    }
  });

  it("prepares each statement once per connection, and forgets what a failed pipeline may not have prepared", async ({ tdb }) => {
    const one = createDb(direct(tdb), 1);
    try {
      await one.sql.$executeRaw`CREATE TABLE sql_test_prep (id int PRIMARY KEY)`;
      const insert = (id: number) => Prisma.sql`INSERT INTO sql_test_prep VALUES (${id})`;
      const count = Prisma.sql`SELECT count(*)::int AS n FROM sql_test_prep WHERE id > ${0}`;
      await one.sql.batch([insert(1)]);
      // The failing statement is the first; the count after it was skipped, never prepared.
      await expect(one.sql.batch([insert(1), count])).rejects.toMatchObject({ code: "23505" });
      expect((await one.sql.batch([count]))[0]!.rows).toEqual([{ n: 1 }]);
      // A runtime error of a statement already prepared, twice: the same error each time.
      const divide = (d: number) => Prisma.sql`SELECT 1 / ${d}::int AS q`;
      expect((await one.sql.batch([divide(1)]))[0]!.rows).toEqual([{ q: 1 }]);
      for (let i = 0; i < 2; i++) await expect(one.sql.batch([divide(0)])).rejects.toMatchObject({ code: "22012" });
      // One whose Parse fails, twice: the syntax error each time (not a missing statement).
      for (let i = 0; i < 2; i++) await expect(one.sql.$queryRaw`SELEC ${1}`).rejects.toMatchObject({ code: "42601" });
      const names = (await one.sql.$queryRaw`SELECT name FROM pg_prepared_statements ORDER BY name`) as { name: string }[];
      expect(names.length).toBeGreaterThan(0);
      expect(names.every((n) => n.name.startsWith("at_"))).toBe(true);
      expect(await one.sql.$queryRaw`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE 'SELECT count(*)::int AS n FROM sql_test_prep%'`).toEqual([{ n: 1 }]);
    } finally {
      await one.$disconnect();
    }
  });
  it("describes a prepared statement's rows once: later executions, alone or in a group, read them as described", async ({ tdb }) => {
    const one = createDb(direct(tdb), 1);
    const describes = vi.spyOn(pg.Connection.prototype, "describe");
    try {
      await one.sql.$executeRaw`CREATE TABLE sql_test_describe (id int PRIMARY KEY)`;
      const typed = (n: number) => Prisma.sql`SELECT ${n}::int AS n, ${`s${n}`}::text AS s, '2026-01-02T00:00:00Z'::timestamptz AS t`;
      const insert = (id: number) => Prisma.sql`INSERT INTO sql_test_describe VALUES (${id})`;
      describes.mockClear();
      // The same text twice in one group: the second is written before the first's reply came.
      const first = await Promise.all([one.sqlCoalesced.$queryRaw(typed(1)), one.sqlCoalesced.$queryRaw(typed(2)), one.sqlCoalesced.$executeRaw(insert(1))]);
      expect(describes).toHaveBeenCalledTimes(3);
      describes.mockClear();
      const later = [await one.sql.$queryRaw(typed(3)), ...(await Promise.all([one.sqlCoalesced.$queryRaw(typed(4)), one.sqlCoalesced.$queryRaw(typed(5))]))];
      expect(await one.sql.$executeRaw(insert(2))).toBe(1);
      expect(describes).not.toHaveBeenCalled();
      const at = new Date("2026-01-02T00:00:00Z");
      expect([...first.slice(0, 2), ...later]).toEqual([1, 2, 3, 4, 5].map((n) => [{ n, s: `s${n}`, t: at }]));
    } finally {
      describes.mockRestore();
      await one.$disconnect();
    }
  });
});


describe("through PgBouncer in transaction mode (one server connection for every client connection)", () => {
  let bouncer: PgBouncer;
  beforeAll(async () => {
    bouncer = await startPgBouncer(testServerUrl(), { poolSize: 1 });
  });
  afterAll(() => bouncer.stop());
  const through = (tdb: DatabaseUrls): DatabaseUrls => ({ url: bouncer.through(directUrlOf(tdb)), directUrl: directUrlOf(tdb) });

  /**
   * Every kind of statement db/sql.ts sends, from many client connections at once, in rounds.
   * Gives each failure's round, index and message.
   */
  async function workload(db: Db, table: string): Promise<string[]> {
    const t = Prisma.raw(table);
    const failures: string[] = [];
    for (let round = 0; round < 5; round++) {
      const base = round * 100;
      const reads = new BatchedSql(db.sql);
      const outcomes = await Promise.allSettled([
        ...Array.from({ length: 20 }, (_, i) => db.sqlCoalesced.$executeRaw`INSERT INTO ${t} VALUES (${base + i})`),
        // A failure inside a coalesced group fails alone.
        db.sqlCoalesced.$executeRaw`INSERT INTO ${t} VALUES (${base})`,
        ...Array.from({ length: 5 }, () => db.sql.$queryRaw`SELECT count(*)::int AS n FROM ${t}`),
        db.sqlTx(async (tx) => tx.$executeRaw`INSERT INTO ${t} VALUES (${base + 50})`, { lockTimeoutMs: 5_000, advisoryLock: { classId: 1, key: table } }),
        reads.$queryRaw`SELECT ${round}::int AS a`,
        reads.$queryRaw`SELECT ${round}::int AS b`,
        db.$transaction(async (tx) => tx.$queryRaw`SELECT ${round}::int AS prisma`),
      ]);
      outcomes.forEach((o, i) => o.status === "rejected" && failures.push(`${round}/${i}: ${String(o.reason)}`));
    }
    return failures;
  }

  it("runs pipelines, coalesced groups, transactions with their lock, and Prisma, naming no statement", async ({ db, tdb }) => {
    await db.sql.$executeRaw`CREATE TABLE sql_test_pooled (id int PRIMARY KEY)`;
    const pooled = createDb(through(tdb), 8);
    try {
      const failures = await workload(pooled, "sql_test_pooled");
      // Only each round's duplicate failed, and alone.
      expect(failures).toEqual([0, 1, 2, 3, 4].map((r) => expect.stringMatching(new RegExp(`^${r}/20: .*duplicate key`))));
      expect(await db.sql.$queryRaw`SELECT count(*)::int AS n FROM sql_test_pooled`).toEqual([{ n: 5 * 21 }]);
    } finally {
      await pooled.$disconnect();
    }
  });

  it("the same statements named per connection break there (the pooler shares one server connection)", async ({ db, tdb }) => {
    await db.sql.$executeRaw`CREATE TABLE sql_test_named (id int PRIMARY KEY)`;
    // Told its URL is direct, a pool prepares by name; a second client connection's first name
    // collides with the first's on the one server connection.
    const named = createDb({ url: through(tdb).url }, 8);
    try {
      const failures = await workload(named, "sql_test_named");
      expect(failures.filter((f) => /prepared statement "at_\d+" (already exists|does not exist)/.test(f)).length).toBeGreaterThan(0);
    } finally {
      await named.$disconnect();
    }
  });
});

describe("BatchedSql (one caller's reads, asked together)", () => {
  it("sends the statements asked for in one turn as one round trip and one transaction; a later one goes in a round of its own", async ({ db }) => {
    const reads = new BatchedSql(db.sql);
    const txid = async (run: BatchedSql) => ((await run.$queryRaw`SELECT txid_current()::text AS id`) as { id: string }[])[0]!.id;
    const [a, b] = await Promise.all([txid(reads), txid(reads)]);
    expect(a).toBe(b);
    const later = await txid(reads);
    expect(later).not.toBe(a);
  });

  it("fails the statements of a round together: they ran in one transaction", async ({ db }) => {
    const reads = new BatchedSql(db.sql);
    const [ok, bad] = await Promise.allSettled([reads.$queryRaw`SELECT 1 AS one`, reads.$queryRaw`SELECT 1 / 0 AS boom`]);
    expect(ok.status).toBe("rejected");
    expect(bad.status).toBe("rejected");
    // The connection went back to the pool in a usable state.
    expect(await reads.$queryRaw`SELECT 2 AS two`).toEqual([{ two: 2 }]);
  });
});

describe("db.sqlCoalesced (single statements of many callers, one write)", () => {
  it("sends the statements asked for in one turn of the event loop as one group; each commits or fails alone, in order", async ({ tdb }) => {
    const one = createDb(tdb, 1);
    // pg deprecates queueing a query on a busy client (gone in pg 9): a group never does.
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on("warning", onWarning);
    try {
      await one.sql.$executeRaw`CREATE TABLE sql_test_group (id int PRIMARY KEY, at timestamptz NOT NULL DEFAULT clock_timestamp())`;
      const insert = (id: number) => one.sqlCoalesced.$executeRaw`INSERT INTO sql_test_group (id) VALUES (${id})`;
      const before = one.sqlCoalesced.groups;
      const outcomes = await Promise.allSettled([
        insert(1),
        insert(2),
        insert(1), // a duplicate: fails alone
        // A value pg cannot send: never written, fails alone.
        one.sqlCoalesced.$executeRaw`INSERT INTO sql_test_group (id) VALUES (${{ toPostgres: () => { throw new Error("unsendable"); } }})`,
        one.sqlCoalesced.$queryRaw`SELEC ${1}`, // a Parse that fails
        insert(3),
        one.sqlCoalesced.$queryRaw`SELECT id FROM sql_test_group ORDER BY id`,
      ]);
      expect(one.sqlCoalesced.groups - before).toBe(1);
      expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "rejected", "rejected", "rejected", "fulfilled", "fulfilled"]);
      expect(outcomes[2]).toMatchObject({ reason: { code: "23505" } });
      expect(outcomes[3]).toMatchObject({ reason: { message: "unsendable" } });
      expect(outcomes[4]).toMatchObject({ reason: { code: "42601" } });
      // The read after them saw each insert before it committed, as its own transaction.
      expect(outcomes[6]).toMatchObject({ value: [{ id: 1 }, { id: 2 }, { id: 3 }] });
      const rows = (await one.sql.$queryRaw`SELECT id, xmin::text AS tx FROM sql_test_group ORDER BY at`) as { id: number; tx: string }[];
      expect(rows.map((r) => r.id)).toEqual([1, 2, 3]);
      expect(new Set(rows.map((r) => r.tx)).size).toBe(3);
      // The one connection is free again, in no transaction; a later group prepares afresh.
      expect(await one.sqlCoalesced.$queryRaw`SELECT count(*)::int AS n FROM sql_test_group WHERE id > ${0}`).toEqual([{ n: 3 }]);
      expect(await one.sql.$queryRaw`SELECT count(*)::int AS open FROM pg_stat_activity
        WHERE datname = current_database() AND state LIKE 'idle in transaction%'`).toEqual([{ open: 0 }]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.includes("already executing"))).toEqual([]);
    } finally {
      process.off("warning", onWarning);
      await one.$disconnect();
    }
  });

  it("fails the rest of a group whose connection dies, and does not hand that connection out again", async ({ tdb }) => {
    const one = createDb(tdb, 1);
    try {
      const outcomes = await Promise.allSettled([
        one.sqlCoalesced.$queryRaw`SELECT ${1}::int AS n`,
        one.sqlCoalesced.$queryRaw`SELECT pg_terminate_backend(pg_backend_pid())`,
        one.sqlCoalesced.$queryRaw`SELECT ${2}::int AS n`,
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "rejected"]);
      expect(outcomes[0]).toMatchObject({ value: [{ n: 1 }] });
      // The pool opens a new connection for what comes next.
      expect(await one.sqlCoalesced.$queryRaw`SELECT ${3}::int AS n`).toEqual([{ n: 3 }]);
      expect(await one.sql.$queryRaw`SELECT ${4}::int AS n`).toEqual([{ n: 4 }]);
    } finally {
      await one.$disconnect();
    }
  });
});
