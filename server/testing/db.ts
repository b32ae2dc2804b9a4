// One database per test file, cloned from the run's migrated template (global-setup.ts).
// Per file rather than per run because runtime recovery scans (expired leases, pending inbox)
// read whole tables: a file must never see rows another file's tests wrote.
import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import { createTemporaryDatabase, type TemporaryDatabase } from "./temporary-db";
import { throughPooler } from "./pgbouncer";

/** `drop()` is idempotent; the run's teardown drops leftovers anyway. */
export type TestDatabase = TemporaryDatabase;

/**
 * Once per file (the `testDb` fixture in fixtures.ts does this), shared by that file's tests.
 * `migrated: false` gives an empty database, for tests of the migration runner itself.
 */
export async function createTestDatabase(opts: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const ctx = inject("testDatabase");
  if (!ctx) throw new Error("No test database context: is server/testing/global-setup.ts the vitest globalSetup?");
  if (!ctx.available) throw new Error(`No test database server: ${ctx.reason}`);

  // The template name already carries run time + pid + random; the suffix separates files.
  const name = `${ctx.template}_${randomBytes(4).toString("hex")}`;
  const tdb = await createTemporaryDatabase(ctx.adminUrl, name, {
    migrate: false,
    ...(opts.migrated === false ? {} : { from: ctx.template }),
  });
  if (ctx.poolerPort === null) return tdb;
  return { ...tdb, url: throughPooler(tdb.url, ctx.poolerPort), directUrl: tdb.url };
}
