// vitest globalSetup: one migrated template database per test run. Each test file clones it
// (server/testing/db.ts), so files never see each other's rows and nobody re-runs migrations.
import { randomBytes } from "node:crypto";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { applyMigrations, createDatabase, databaseUrl, dropDatabase } from "../db/migrate";

export type TestDatabaseContext =
  | { available: true; adminUrl: string; template: string }
  | { available: false; reason: string };

declare module "vitest" {
  interface ProvidedContext {
    testDatabase: TestDatabaseContext;
  }
}

const DEFAULT_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres";
/** Every database a test run creates starts with this, followed by `<base36 ms>_<pid>_<hex>`. */
export const TEST_DATABASE_PREFIX = "at_test_";
/** Databases of killed runs (no teardown) older than this are dropped by the next run. */
const ORPHAN_AGE_MS = 24 * 60 * 60 * 1000;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const adminUrl = process.env.TEST_DATABASE_URL ?? DEFAULT_ADMIN_URL;
  // pid + random: concurrent runs on one machine (and several machines on one server) differ.
  const template = `${TEST_DATABASE_PREFIX}${Date.now().toString(36)}_${process.pid}_${randomBytes(3).toString("hex")}`;

  try {
    await createDatabase(adminUrl, template);
  } catch (err) {
    // Unit tests should still run without a server; integration tests then fail in
    // createTestDatabase() with this reason.
    const reason = `cannot create a test database on ${redact(adminUrl)}: ${err instanceof Error ? err.message : String(err)}`;
    console.warn(`[global-setup] ${reason}`);
    project.provide("testDatabase", { available: false, reason });
    return async () => {};
  }

  try {
    await applyMigrations(databaseUrl(adminUrl, template));
    await withClient(adminUrl, async (c) => {
      // CREATE DATABASE … TEMPLATE fails while anyone is connected to the template.
      await c.query(`ALTER DATABASE ${c.escapeIdentifier(template)} WITH ALLOW_CONNECTIONS false`);
    });
    await dropOrphans(adminUrl).catch((err: unknown) => {
      console.warn(`[global-setup] could not drop orphaned test databases: ${String(err)}`);
    });
  } catch (err) {
    await dropDatabase(adminUrl, template).catch(() => {});
    throw err;
  }

  project.provide("testDatabase", { available: true, adminUrl, template });
  return async () => {
    await dropRunDatabases(adminUrl, template);
  };
}

/** The template and every database cloned from it (their names extend the template's). */
async function dropRunDatabases(adminUrl: string, template: string): Promise<void> {
  const names = await withClient(adminUrl, async (c) => {
    const { rows } = await c.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE starts_with(datname, $1) ORDER BY datname DESC`,
      [template],
    );
    return rows.map((r) => r.datname);
  });
  // DESC puts clones before the template they were made from.
  for (const name of names) await dropDatabase(adminUrl, name);
}

async function dropOrphans(adminUrl: string): Promise<void> {
  const names = await withClient(adminUrl, async (c) => {
    const { rows } = await c.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE starts_with(datname, $1)`,
      [TEST_DATABASE_PREFIX],
    );
    return rows.map((r) => r.datname);
  });
  const cutoff = Date.now() - ORPHAN_AGE_MS;
  for (const name of names) {
    const stamp = name.slice(TEST_DATABASE_PREFIX.length).split("_")[0] ?? "";
    const createdAt = Number.parseInt(stamp, 36);
    if (Number.isFinite(createdAt) && createdAt < cutoff) await dropDatabase(adminUrl, name);
  }
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unparseable TEST_DATABASE_URL)";
  }
}
