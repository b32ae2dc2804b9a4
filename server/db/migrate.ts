// Applies prisma/migrations/<name>/migration.sql the way `prisma migrate deploy` does, because
// the Prisma CLI needs a schema-engine binary fetched at install time, which an install without
// scripts or network does not get.
// Same `_prisma_migrations` table, rows, checksums and advisory lock, so either tool can take
// over a database the other one migrated.
import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import type pg from "pg";
import { withClient } from "./admin";

/** The key Prisma's schema engine locks on; sharing it serialises us with `prisma migrate`. */
const PRISMA_MIGRATE_LOCK_KEY = 72707369;

const TABLE = `"_prisma_migrations"`;

export interface ApplyMigrationsOptions {
  /** Defaults to `<cwd>/prisma/migrations` (cwd, not import.meta.url, so bundlers leave it alone). */
  migrationsDir?: string;
  log?: (line: string) => void;
}

export interface LocalMigration {
  name: string;
  script: string;
  checksum: string;
}

/** A row of `_prisma_migrations`, as this module reads it. */
export interface MigrationRow {
  id: string;
  checksum: string;
  finished_at: Date | null;
  migration_name: string;
  logs: string | null;
  rolled_back_at: Date | null;
  started_at: Date;
}

export function defaultMigrationsDir(): string {
  return path.join(process.cwd(), "prisma", "migrations");
}

/** Every directory is a migration, ordered by name (byte order, as Prisma sorts). */
export async function readMigrations(migrationsDir: string): Promise<LocalMigration[]> {
  const entries = await readdir(migrationsDir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return Promise.all(
    names.map(async (name) => {
      const file = path.join(migrationsDir, name, "migration.sql");
      const script = await readFile(file, "utf8").catch((err: unknown) => {
        throw new Error(`Migration ${name} has no readable migration.sql (${file})`, { cause: err });
      });
      return { name, script, checksum: sha256Hex(script) };
    }),
  );
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * Prisma's own comparison: a checkout with other line endings still matches, and rows written by
 * old engines stored the hex without zero padding (prisma-engines#1887).
 */
function checksumMatches(script: string, stored: string): boolean {
  const variants = [script, script.replace(/\r\n/g, "\n"), script.replace(/\r?\n/g, "\r\n")];
  return variants.some((v) => {
    const digest = createHash("sha256").update(v, "utf8").digest();
    const hex =
      stored.length !== 0 && stored.length !== 64
        ? [...digest].map((b) => b.toString(16)).join("")
        : digest.toString("hex");
    return hex === stored;
  });
}

/**
 * Prisma URLs may carry `?schema=`; pg does not understand it, Prisma strips it and works in
 * that schema (default `public`), so do the same.
 */
function splitSchemaParam(databaseUrl: string): { connectionString: string; schema: string } {
  const url = new URL(databaseUrl);
  const schema = url.searchParams.get("schema") ?? "public";
  url.searchParams.delete("schema");
  return { connectionString: url.toString(), schema };
}

function errorText(err: unknown): string {
  if (err instanceof Error) {
    const detail = (err as Error & { detail?: unknown }).detail;
    return typeof detail === "string" && detail ? `${err.message}\n${detail}` : err.message;
  }
  return String(err);
}

export async function applyMigrations(
  databaseUrl: string,
  opts: ApplyMigrationsOptions = {},
): Promise<{ applied: string[] }> {
  const log = opts.log ?? (() => {});
  // Read files before connecting: a broken checkout should fail without touching the database.
  const local = await readMigrations(opts.migrationsDir ?? defaultMigrationsDir());
  const { connectionString, schema } = splitSchemaParam(databaseUrl);

  const onError = (err: Error) => log(`migrate: connection error: ${err.message}`);
  return withClient(connectionString, async (client) => {
    // Session-level lock, released when the connection closes (also if this process dies).
    const tried = await client.query<{ locked: boolean }>(
      `SELECT pg_try_advisory_lock(${PRISMA_MIGRATE_LOCK_KEY}) AS locked`,
    );
    if (!tried.rows[0]?.locked) {
      log("migrate: another process is migrating this database; waiting for its lock");
      await client.query(`SELECT pg_advisory_lock(${PRISMA_MIGRATE_LOCK_KEY})`);
    }

    const ident = client.escapeIdentifier(schema);
    // Look before creating, as Prisma does: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege
    // on the database even when the schema exists.
    const found = await client.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [schema]);
    if (found.rowCount === 0) await client.query(`CREATE SCHEMA ${ident}`);
    await client.query(`SET search_path TO ${ident}`);
    // Prisma's DDL verbatim (prisma-engines, postgres flavour), only made idempotent.
    await client.query(`
      CREATE TABLE IF NOT EXISTS ${TABLE} (
        id                      VARCHAR(36) PRIMARY KEY NOT NULL,
        checksum                VARCHAR(64) NOT NULL,
        finished_at             TIMESTAMPTZ,
        migration_name          VARCHAR(255) NOT NULL,
        logs                    TEXT,
        rolled_back_at          TIMESTAMPTZ,
        started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
        applied_steps_count     INTEGER NOT NULL DEFAULT 0
      )`);

    const { rows } = await client.query<MigrationRow>(
      `SELECT id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at
         FROM ${TABLE} ORDER BY started_at ASC`,
    );
    const live = rows.filter((r) => r.rolled_back_at === null);
    assertNoFailedMigrations(live);
    assertChecksumsMatch(live, local, log);

    const appliedNames = new Set(live.map((r) => r.migration_name));
    const pending = local.filter((m) => !appliedNames.has(m.name));
    const applied: string[] = [];
    for (const migration of pending) {
      const started = performance.now();
      await applyOne(client, migration);
      applied.push(migration.name);
      log(`migrate: applied ${migration.name} in ${Math.round(performance.now() - started)} ms`);
    }
    if (applied.length === 0) log("migrate: database is up to date");
    return { applied };
  }, { onError });
}

function assertNoFailedMigrations(live: MigrationRow[]): void {
  const failed = live.find((r) => r.finished_at === null);
  if (!failed) return;
  throw new Error(
    `Migration ${failed.migration_name} failed (started ${failed.started_at.toISOString()}); ` +
      `no further migrations will be applied (Prisma P3009).\n` +
      `Logs: ${failed.logs ?? "(none)"}\n` +
      `Our runner applies each migration in a transaction, so a failed one left no changes: fix the ` +
      `SQL, then mark the attempt rolled back (what \`prisma migrate resolve --rolled-back\` does): ` +
      `UPDATE "_prisma_migrations" SET rolled_back_at = now() WHERE id = '${failed.id}';`,
  );
}

function assertChecksumsMatch(
  live: MigrationRow[],
  local: LocalMigration[],
  log: (line: string) => void,
): void {
  const byName = new Map(local.map((m) => [m.name, m]));
  for (const row of live) {
    const file = byName.get(row.migration_name);
    if (!file) {
      // A newer deployment's migration, or a deleted directory: not ours to judge, but visible.
      log(`migrate: warning: ${row.migration_name} is applied but missing from the migrations directory`);
      continue;
    }
    if (!checksumMatches(file.script, row.checksum)) {
      throw new Error(
        `Migration ${row.migration_name} was modified after it was applied: the database recorded ` +
          `checksum ${row.checksum}, the file now hashes to ${file.checksum}. Applied migrations ` +
          `must not be edited; add a new migration instead.`,
      );
    }
  }
}

async function applyOne(client: pg.Client, migration: LocalMigration): Promise<void> {
  const id = randomUUID();
  // The "started" row is committed on its own (as Prisma does) so a failure stays on record and
  // blocks later runs until someone looks at it.
  await client.query(
    `INSERT INTO ${TABLE} (id, checksum, started_at, migration_name, applied_steps_count)
     VALUES ($1, $2, now(), $3, 0)`,
    [id, migration.checksum, migration.name],
  );
  try {
    await client.query("BEGIN");
    // No parameters: pg uses the simple query protocol, which runs a multi-statement script.
    await client.query(migration.script);
    await client.query(
      `UPDATE ${TABLE} SET applied_steps_count = applied_steps_count + 1, finished_at = now()
        WHERE id = $1`,
      [id],
    );
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    const logs = errorText(err);
    await client.query(`UPDATE ${TABLE} SET logs = $2 WHERE id = $1`, [id, logs]).catch(() => {});
    throw new Error(`Migration ${migration.name} failed and was rolled back: ${logs}`, { cause: err });
  }
}
