// One database per test file, cloned from the run's migrated template (global-setup.ts).
// Per file rather than per run because runtime recovery scans (expired leases, pending inbox)
// read whole tables: a file must never see rows another file's tests wrote.
import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import { createDatabase, databaseUrl, dropDatabase } from "../db/migrate";

export interface TestDatabase {
  name: string;
  url: string;
  /** Idempotent; works while connections are still open. Teardown drops leftovers anyway. */
  drop(): Promise<void>;
}

/**
 * Call once per file (beforeAll) and share the result between that file's tests.
 * `migrated: false` gives an empty database, for tests of the migration runner itself.
 */
export async function createTestDatabase(opts: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const ctx = inject("testDatabase");
  if (!ctx) throw new Error("No test database context: is server/testing/global-setup.ts the vitest globalSetup?");
  if (!ctx.available) throw new Error(`No test database server: ${ctx.reason}`);

  // The template name already carries run time + pid + random; the suffix separates files.
  const name = `${ctx.template}_${randomBytes(4).toString("hex")}`;
  await createDatabase(ctx.adminUrl, name, opts.migrated === false ? {} : { template: ctx.template });

  let dropped: Promise<void> | undefined;
  return {
    name,
    url: databaseUrl(ctx.adminUrl, name),
    drop: () => (dropped ??= dropDatabase(ctx.adminUrl, name)),
  };
}
