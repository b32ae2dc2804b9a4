// Throwaway databases for tests, the e2e server and benchmarks: created (and migrated) on the
// test server, dropped once. Their names say who made them and when, so a later run can drop
// what a killed process left behind.
import { randomBytes } from "node:crypto";
import { createDatabase, databaseUrl, dropDatabase, listDatabases, redactUrl, withClient } from "../db/admin";
import type { DatabaseUrls } from "../db/client";
import { applyMigrations } from "../db/migrate";

/** The server throwaway databases go on: `TEST_DATABASE_URL`, else the local trust-auth default. */
export function testServerUrl(): string {
  return process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
}

export interface TemporaryDatabase extends DatabaseUrls {
  name: string;
  /** Idempotent; works while connections are still open. */
  drop(): Promise<void>;
}

/** CREATE DATABASE failed: no server, or no right to create one. Nothing was created. */
export class CreateDatabaseError extends Error {
  override readonly name = "CreateDatabaseError";
}

/** `<prefix><base36 ms>_<pid>_<hex>`: unique across concurrent processes and machines. */
export function temporaryDatabaseName(prefix: string): string {
  return `${prefix}${Date.now().toString(36)}_${process.pid}_${randomBytes(3).toString("hex")}`;
}

/** What a name from temporaryDatabaseName (or one extending it) says; null for other names. */
export function parseTemporaryDatabaseName(prefix: string, name: string): { createdAt: number; pid: number } | null {
  if (!name.startsWith(prefix)) return null;
  const m = /^([0-9a-z]+)_(\d+)_/.exec(name.slice(prefix.length));
  if (!m) return null;
  const createdAt = Number.parseInt(m[1]!, 36);
  return Number.isFinite(createdAt) ? { createdAt, pid: Number(m[2]) } : null;
}

/**
 * Creates `name` (a copy of `from` when given), applies the migrations unless `migrate: false`,
 * and with `asTemplate` closes it to connections so CREATE DATABASE … TEMPLATE can copy it.
 * Dropped again when a step after CREATE fails.
 */
export async function createTemporaryDatabase(
  adminUrl: string,
  name: string,
  opts: { from?: string; migrate?: boolean; asTemplate?: boolean } = {},
): Promise<TemporaryDatabase> {
  try {
    await createDatabase(adminUrl, name, opts.from ? { template: opts.from } : {});
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new CreateDatabaseError(`cannot create database ${name} on ${redactUrl(adminUrl)}: ${why}`, { cause: err });
  }
  let dropped: Promise<void> | undefined;
  const db: TemporaryDatabase = {
    name,
    url: databaseUrl(adminUrl, name),
    drop: () => (dropped ??= dropDatabase(adminUrl, name)),
  };
  try {
    if (opts.migrate !== false) await applyMigrations(db.url);
    if (opts.asTemplate) {
      await withClient(adminUrl, (c) => c.query(`ALTER DATABASE ${c.escapeIdentifier(name)} WITH ALLOW_CONNECTIONS false`));
    }
  } catch (err) {
    await db.drop().catch(() => {});
    throw err;
  }
  return db;
}

export type OrphanTest = (made: { createdAt: number; pid: number } | null) => boolean;

/** Older than `ms`: for servers several machines share, where a pid says nothing. */
export const olderThan =
  (ms: number): OrphanTest =>
  (made) =>
    made !== null && made.createdAt < Date.now() - ms;

/** No process of this machine can be signalled under its creator's pid (or the name names none). */
export const creatorGone: OrphanTest = (made) => {
  if (made === null) return true;
  try {
    process.kill(made.pid, 0);
    return false;
  } catch {
    return true;
  }
};

/**
 * Drops the databases named `<prefix>…` that `isOrphan` picks, each even when another one
 * fails (the failures are thrown together afterwards).
 */
export async function dropOrphanedDatabases(adminUrl: string, prefix: string, isOrphan: OrphanTest): Promise<void> {
  const orphans = (await listDatabases(adminUrl, prefix)).filter((name) => isOrphan(parseTemporaryDatabaseName(prefix, name)));
  const failed: unknown[] = [];
  for (const name of orphans) await dropDatabase(adminUrl, name).catch((err: unknown) => failed.push(err));
  if (failed.length > 0) throw new AggregateError(failed, `could not drop ${failed.length} orphaned databases`);
}
