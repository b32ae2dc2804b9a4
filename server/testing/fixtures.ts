// The file's test database, Prisma client and runtime as vitest fixtures: a test names what it
// uses (`it("…", async ({ rt }) => …)`). They are file-scoped: made for the first test of the
// file that asks, shared by the file's tests, and torn down after its last test (the runtime
// before the database). One database per file, as createTestDatabase explains.
import { test } from "vitest";
import { createDb } from "../db/client";
import { createTestDatabase } from "./db";
import { startTestRuntime, type TestRuntimeOptions } from "./runtime-harness";

/** `tdb`: the file's database; `db`: a Prisma client on it with `poolSize` connections (default 5). */
export function databaseTest(opts: { poolSize?: number } = {}) {
  return (
    test
      // `{}`, not `_`: vitest reads which fixtures a fixture uses from this pattern.
      .extend("tdb", { scope: "file" }, async ({}, { onCleanup }) => {
        const tdb = await createTestDatabase();
        onCleanup(() => tdb.drop());
        return tdb;
      })
      .extend("db", { scope: "file" }, async ({ tdb }, { onCleanup }) => {
        const db = createDb(tdb, opts.poolSize ?? 5);
        onCleanup(() => db.$disconnect());
        return db;
      })
  );
}

/** databaseTest plus `rt`: a test runtime on the file's database, started with `opts`. */
export function runtimeTest(opts: TestRuntimeOptions | (() => Promise<TestRuntimeOptions>) = {}) {
  return databaseTest().extend("rt", { scope: "file" }, async ({ tdb }, { onCleanup }) => {
    const rt = await startTestRuntime(tdb, typeof opts === "function" ? await opts() : opts);
    onCleanup(() => rt.stop());
    return rt;
  });
}
