import { createHash } from "node:crypto";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../testing/db";
import { withClient } from "./admin";
import { directUrlOf } from "./client";
import { applyMigrations, defaultMigrationsDir, readMigrations, type MigrationRow } from "./migrate";

const databases: TestDatabase[] = [];
const tempDirs: string[] = [];

afterAll(async () => {
  await Promise.all(databases.map((db) => db.drop()));
  await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** Migrations run on the server itself (never through a pooler): its direct URL as `url`. */
async function emptyDatabase(): Promise<TestDatabase> {
  const db = await createTestDatabase({ migrated: false });
  databases.push(db);
  return { ...db, url: directUrlOf(db) };
}

/** A migrations directory holding the project's migrations plus `extra` ones. */
async function migrationsDir(extra: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "migrations-"));
  tempDirs.push(dir);
  await cp(defaultMigrationsDir(), dir, { recursive: true });
  for (const [name, sql] of Object.entries(extra)) await writeMigration(dir, name, sql);
  return dir;
}

async function writeMigration(dir: string, name: string, sql: string): Promise<void> {
  await mkdir(path.join(dir, name), { recursive: true });
  await writeFile(path.join(dir, name, "migration.sql"), sql);
}

async function query<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  return withClient(url, async (client) => (await client.query<R>(text, values)).rows);
}

interface Row extends MigrationRow {
  applied_steps_count: number;
}

const rowsOf = (url: string) =>
  query<Row>(url, `SELECT * FROM "_prisma_migrations" ORDER BY started_at, migration_name`);

describe("applyMigrations", () => {
  it("applies every migration to a fresh database and records it as Prisma does", async () => {
    const db = await emptyDatabase();
    const names = (await readMigrations(defaultMigrationsDir())).map((m) => m.name);
    expect(names.length).toBeGreaterThan(0);

    const { applied } = await applyMigrations(db.url);
    expect(applied).toEqual(names);

    const rows = await rowsOf(db.url);
    expect(rows.map((r) => r.migration_name)).toEqual(names);
    for (const row of rows) {
      const bytes = await readFile(path.join(defaultMigrationsDir(), row.migration_name, "migration.sql"));
      expect(row.checksum).toBe(createHash("sha256").update(bytes).digest("hex"));
      expect(row.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.rolled_back_at).toBeNull();
      expect(row.logs).toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }

    // Prisma's table shape, so `prisma migrate deploy` accepts the database as is.
    const columns = await query<{ column_name: string; data_type: string; is_nullable: string; len: number | null }>(
      db.url,
      `SELECT column_name, data_type, is_nullable, character_maximum_length AS len
         FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name = '_prisma_migrations'
        ORDER BY ordinal_position`,
    );
    expect(columns).toEqual([
      { column_name: "id", data_type: "character varying", is_nullable: "NO", len: 36 },
      { column_name: "checksum", data_type: "character varying", is_nullable: "NO", len: 64 },
      { column_name: "finished_at", data_type: "timestamp with time zone", is_nullable: "YES", len: null },
      { column_name: "migration_name", data_type: "character varying", is_nullable: "NO", len: 255 },
      { column_name: "logs", data_type: "text", is_nullable: "YES", len: null },
      { column_name: "rolled_back_at", data_type: "timestamp with time zone", is_nullable: "YES", len: null },
      { column_name: "started_at", data_type: "timestamp with time zone", is_nullable: "NO", len: null },
      { column_name: "applied_steps_count", data_type: "integer", is_nullable: "NO", len: null },
    ]);

    const second = await applyMigrations(db.url);
    expect(second.applied).toEqual([]);
    expect(await rowsOf(db.url)).toEqual(rows);
  });

  it("backfills each session's spend from its own steps, not from a fork's copies of its source's", async () => {
    const db = await emptyDatabase();
    const dir = await migrationsDir();
    const later = (await readMigrations(dir)).map((m) => m.name).filter((n) => n >= "20261201300000");
    const held = await mkdtemp(path.join(tmpdir(), "held-"));
    tempDirs.push(held);
    for (const name of later) await cp(path.join(dir, name), path.join(held, name), { recursive: true });
    for (const name of later) await rm(path.join(dir, name), { recursive: true });
    await applyMigrations(db.url, { migrationsDir: dir });
    const step = (id: string, tokens: [number, number]) =>
      JSON.stringify({ kind: "assistant_message", messageId: id, turnId: "t", step: 0, model: "m", text: "", toolCalls: [], usage: { inputTokens: tokens[0], outputTokens: tokens[1] }, interrupted: false });
    await query(db.url, `INSERT INTO sessions (id, title, model) VALUES ('src', 'src', '{}'), ('fork', 'fork', '{}')`);
    await query(db.url, `UPDATE sessions SET forked_from_id = 'src' WHERE id = 'fork'`);
    await query(
      db.url,
      `INSERT INTO session_events (session_id, seq, kind, message_id, payload) VALUES
        ('src', 1, 'assistant_message', 'msg_a', $1), ('fork', 1, 'assistant_message', 'msg_a', $1), ('fork', 2, 'assistant_message', 'msg_b', $2)`,
      [step("msg_a", [100, 10]), step("msg_b", [5, 1])],
    );
    for (const name of later) await cp(path.join(held, name), path.join(dir, name), { recursive: true });
    await applyMigrations(db.url, { migrationsDir: dir });
    const spend = await query<{ id: string; input: string; output: string }>(
      db.url,
      `SELECT id, spent_input_tokens::text AS input, spent_output_tokens::text AS output FROM sessions ORDER BY id`,
    );
    expect(spend).toEqual([
      { id: "fork", input: "5", output: "1" },
      { id: "src", input: "100", output: "10" },
    ]);
  });

  it("applies only new migrations, in name order", async () => {
    const db = await emptyDatabase();
    const dir = await migrationsDir();
    await applyMigrations(db.url, { migrationsDir: dir });

    await writeMigration(dir, "29990102000000_b", `CREATE TABLE b_marker (id int);`);
    await writeMigration(dir, "29990101000000_a", `CREATE TABLE a_marker (id int);`);
    const { applied } = await applyMigrations(db.url, { migrationsDir: dir });
    expect(applied).toEqual(["29990101000000_a", "29990102000000_b"]);
  });

  it("lets two processes start at once: one applies, the other waits and finds nothing to do", async () => {
    const db = await emptyDatabase();
    // The sleep keeps the first runner inside the lock long enough for the second to queue.
    const dir = await migrationsDir({ "29990101000000_slow": `SELECT pg_sleep(0.5); CREATE TABLE slow_marker (id int);` });
    const names = (await readMigrations(dir)).map((m) => m.name);
    const logs: string[] = [];

    const results = await Promise.all([
      applyMigrations(db.url, { migrationsDir: dir, log: (l) => logs.push(`A ${l}`) }),
      applyMigrations(db.url, { migrationsDir: dir, log: (l) => logs.push(`B ${l}`) }),
    ]);

    const applied = results.map((r) => r.applied);
    expect(applied).toContainEqual(names);
    expect(applied).toContainEqual([]);
    expect(logs.some((l) => l.includes("waiting for its lock"))).toBe(true);

    const counts = await query<{ migration_name: string; n: number }>(
      db.url,
      `SELECT migration_name, count(*)::int AS n FROM "_prisma_migrations" GROUP BY 1 ORDER BY 1`,
    );
    expect(counts).toEqual(names.map((migration_name) => ({ migration_name, n: 1 })));
  });

  it("refuses when an applied migration's file no longer matches its checksum", async () => {
    const db = await emptyDatabase();
    const dir = await migrationsDir({ "29990101000000_a": `CREATE TABLE a_marker (id int);` });
    await applyMigrations(db.url, { migrationsDir: dir });
    await writeMigration(dir, "29990102000000_b", `CREATE TABLE b_marker (id int);`);

    await query(db.url, `UPDATE "_prisma_migrations" SET checksum = repeat('0', 64) WHERE migration_name = $1`, [
      "29990101000000_a",
    ]);
    await expect(applyMigrations(db.url, { migrationsDir: dir })).rejects.toThrow(
      /29990101000000_a was modified after it was applied/,
    );
    // Refused before applying anything newer.
    expect(await query(db.url, `SELECT to_regclass('b_marker') AS t`)).toEqual([{ t: null }]);
  });

  it("accepts a checkout with CRLF line endings (as Prisma does)", async () => {
    const db = await emptyDatabase();
    const dir = await migrationsDir({ "29990101000000_a": `CREATE TABLE a_marker (id int);\nSELECT 1;\n` });
    await applyMigrations(db.url, { migrationsDir: dir });
    await writeMigration(dir, "29990101000000_a", `CREATE TABLE a_marker (id int);\r\nSELECT 1;\r\n`);
    expect((await applyMigrations(db.url, { migrationsDir: dir })).applied).toEqual([]);
  });

  it("records a failed migration, leaves no partial changes, and refuses until it is marked rolled back", async () => {
    const db = await emptyDatabase();
    const dir = await migrationsDir({
      "29990101000000_bad": `CREATE TABLE half_done (id int);\nSELECT 1/0;`,
      "29990102000000_after": `CREATE TABLE after_marker (id int);`,
    });

    await expect(applyMigrations(db.url, { migrationsDir: dir })).rejects.toThrow(
      /29990101000000_bad failed and was rolled back: division by zero/,
    );
    expect(await query(db.url, `SELECT to_regclass('half_done') AS t`)).toEqual([{ t: null }]);
    const failed = (await rowsOf(db.url)).find((r) => r.migration_name === "29990101000000_bad");
    expect(failed).toMatchObject({ finished_at: null, rolled_back_at: null, applied_steps_count: 0 });
    expect(failed?.logs).toContain("division by zero");

    await expect(applyMigrations(db.url, { migrationsDir: dir })).rejects.toThrow(
      /29990101000000_bad failed .*no further migrations will be applied/s,
    );

    // The fix: correct the SQL, then do what `prisma migrate resolve --rolled-back` does.
    await writeMigration(dir, "29990101000000_bad", `CREATE TABLE half_done (id int);`);
    await query(db.url, `UPDATE "_prisma_migrations" SET rolled_back_at = now() WHERE finished_at IS NULL`);
    const { applied } = await applyMigrations(db.url, { migrationsDir: dir });
    expect(applied).toEqual(["29990101000000_bad", "29990102000000_after"]);
    const attempts = (await rowsOf(db.url)).filter((r) => r.migration_name === "29990101000000_bad");
    expect(attempts.map((r) => r.rolled_back_at === null)).toEqual([false, true]);
  });

  it("honours Prisma's ?schema= URL parameter", async () => {
    const db = await emptyDatabase();
    const url = new URL(db.url);
    url.searchParams.set("schema", "tenant_a");
    await applyMigrations(url.toString());

    const tables = await query<{ table_schema: string; table_name: string }>(
      db.url,
      `SELECT table_schema, table_name FROM information_schema.tables
        WHERE table_name IN ('_prisma_migrations', 'sessions') ORDER BY table_name`,
    );
    expect(tables).toEqual([
      { table_schema: "tenant_a", table_name: "_prisma_migrations" },
      { table_schema: "tenant_a", table_name: "sessions" },
    ]);
  });
});
