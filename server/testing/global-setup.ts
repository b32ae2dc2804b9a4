// vitest globalSetup: one migrated template database per test run. Each test file clones it
// (server/testing/db.ts), so files never see each other's rows and nobody re-runs migrations.
import type { TestProject } from "vitest/node";
import { dropDatabase, listDatabases } from "../db/admin";
import { startPgBouncer } from "./pgbouncer";
import {
  CreateDatabaseError,
  createTemporaryDatabase,
  dropOrphanedDatabases,
  olderThan,
  temporaryDatabaseName,
  testServerUrl,
} from "./temporary-db";

export type TestDatabaseContext =
  /** `poolerPort`: the PgBouncer (transaction mode) test databases' `url`s go through. */
  | { available: true; adminUrl: string; template: string; poolerPort: number | null }
  | { available: false; reason: string };

declare module "vitest" {
  interface ProvidedContext {
    testDatabase: TestDatabaseContext;
  }
}

/** Every database a test run creates starts with this, followed by `<base36 ms>_<pid>_<hex>`. */
const TEST_DATABASE_PREFIX = "at_test_";
/** Databases of killed runs (no teardown) older than this are dropped by the next run. */
const ORPHAN_AGE_MS = 24 * 60 * 60 * 1000;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const adminUrl = testServerUrl();
  let template: string;
  try {
    // Migrated once, then closed to connections: CREATE DATABASE … TEMPLATE needs that.
    template = (
      await createTemporaryDatabase(adminUrl, temporaryDatabaseName(TEST_DATABASE_PREFIX), { asTemplate: true })
    ).name;
  } catch (err) {
    if (!(err instanceof CreateDatabaseError)) throw err;
    // Unit tests should still run without a server; integration tests then fail in
    // createTestDatabase() with this reason.
    const reason = err.message;
    console.warn(`[global-setup] ${reason}`);
    project.provide("testDatabase", { available: false, reason });
    return async () => {};
  }
  await dropOrphanedDatabases(adminUrl, TEST_DATABASE_PREFIX, olderThan(ORPHAN_AGE_MS)).catch((err: unknown) => {
    console.warn(`[global-setup] could not drop orphaned test databases: ${String(err)}`);
  });

  // The suite runs as operators deploy it: the app's statements through PgBouncer in
  // transaction mode, LISTEN and migrations direct (TEST_DATABASE_POOLER=none: all direct).
  const bouncer = process.env.TEST_DATABASE_POOLER === "none" ? null : await startPgBouncer(adminUrl, { poolSize: 40 });
  project.provide("testDatabase", { available: true, adminUrl, template, poolerPort: bouncer?.port ?? null });
  return async () => {
    await bouncer?.stop();
    // The template and every database cloned from it (their names extend the template's);
    // descending order puts clones before the template they were made from.
    for (const name of await listDatabases(adminUrl, template)) await dropDatabase(adminUrl, name);
  };
}
