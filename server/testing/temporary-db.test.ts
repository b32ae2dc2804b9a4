import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createDatabase, dropDatabase, listDatabases, withClient } from "../db/admin";
import {
  CreateDatabaseError,
  createTemporaryDatabase,
  creatorGone,
  dropOrphanedDatabases,
  olderThan,
  parseTemporaryDatabaseName,
  temporaryDatabaseName,
} from "./temporary-db";

const ctx = inject("testDatabase");
const adminUrl = ctx.available ? ctx.adminUrl : "";
// A prefix of this file's own, so nothing here touches another run's databases.
const PREFIX = `at_tmp_${randomBytes(3).toString("hex")}_`;

afterAll(async () => {
  if (ctx.available) for (const name of await listDatabases(adminUrl, PREFIX)) await dropDatabase(adminUrl, name);
});

describe("temporary database names", () => {
  it("say when and by which process they were made", () => {
    const before = Date.now();
    const made = parseTemporaryDatabaseName(PREFIX, temporaryDatabaseName(PREFIX));
    expect(made?.pid).toBe(process.pid);
    expect(made!.createdAt).toBeGreaterThanOrEqual(before);
    expect(made!.createdAt).toBeLessThanOrEqual(Date.now());
    // Names extending one (a test file's clone of the run's template) say the same.
    expect(parseTemporaryDatabaseName("at_test_", "at_test_abc_12_ff00ff_0a1b2c3d")).toEqual({
      createdAt: Number.parseInt("abc", 36),
      pid: 12,
    });
  });

  it("are not read into other names", () => {
    expect(parseTemporaryDatabaseName("at_e2e_", "at_e2e_restart_abc_12_ff00ff")).toBeNull();
    expect(parseTemporaryDatabaseName("at_e2e_", "postgres")).toBeNull();
  });
});

describe.runIf(ctx.available)("createTemporaryDatabase", () => {
  it("creates a migrated database, and drop() is idempotent", async () => {
    const db = await createTemporaryDatabase(adminUrl, temporaryDatabaseName(PREFIX));
    const tables = await withClient(db.url, (c) =>
      c.query(`SELECT 1 FROM information_schema.tables WHERE table_name = '_prisma_migrations'`),
    );
    expect(tables.rowCount).toBe(1);
    await Promise.all([db.drop(), db.drop()]);
    expect(await listDatabases(adminUrl, db.name)).toEqual([]);
  });

  it("copies a template closed to connections, empty unless migrated", async () => {
    const template = await createTemporaryDatabase(adminUrl, temporaryDatabaseName(PREFIX), { asTemplate: true });
    await expect(withClient(template.url, (c) => c.query("SELECT 1"))).rejects.toThrow(/not currently accepting connections/);
    const copy = await createTemporaryDatabase(adminUrl, `${template.name}_copy`, { from: template.name, migrate: false });
    const empty = await createTemporaryDatabase(adminUrl, `${template.name}_empty`, { migrate: false });
    const count = (url: string) =>
      withClient(url, async (c) => (await c.query(`SELECT 1 FROM pg_tables WHERE tablename = '_prisma_migrations'`)).rowCount);
    expect(await count(copy.url)).toBe(1);
    expect(await count(empty.url)).toBe(0);
  });

  it("reports a database it could not create as CreateDatabaseError", async () => {
    const name = temporaryDatabaseName(PREFIX);
    await createDatabase(adminUrl, name);
    await expect(createTemporaryDatabase(adminUrl, name)).rejects.toBeInstanceOf(CreateDatabaseError);
  });
});

describe.runIf(ctx.available)("dropOrphanedDatabases", () => {
  it("drops the databases its test picks, and only those", async () => {
    const day = 24 * 60 * 60 * 1000;
    const old = `${PREFIX}${(Date.now() - 2 * day).toString(36)}_${process.pid}_aaaaaa`;
    const fresh = temporaryDatabaseName(PREFIX);
    const foreign = `${PREFIX}handmade`;
    for (const name of [old, fresh, foreign]) await createDatabase(adminUrl, name);

    await dropOrphanedDatabases(adminUrl, PREFIX, olderThan(day));
    expect(await listDatabases(adminUrl, PREFIX)).toEqual(expect.arrayContaining([fresh, foreign]));
    expect(await listDatabases(adminUrl, old)).toEqual([]);

    // This process is alive; a name without a creator has none.
    await dropOrphanedDatabases(adminUrl, PREFIX, creatorGone);
    expect(await listDatabases(adminUrl, fresh)).toEqual([fresh]);
    expect(await listDatabases(adminUrl, foreign)).toEqual([]);
  });
});
