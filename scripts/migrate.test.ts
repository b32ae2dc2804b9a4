import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { withClient } from "../server/db/admin";
import { defaultMigrationsDir, readMigrations } from "../server/db/migrate";
import { directUrlOf } from "../server/db/client";
import { createTestDatabase } from "../server/testing/db";

// `npm run migrate` as a process: a clear refusal without DATABASE_URL, and the project's
// migrations applied (once) with it.

const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));

function migrate(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/migrate.ts"], {
      cwd: REPO_ROOT,
      env: { NODE_ENV: "test", PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
  });
}

// `{}`, not `_`: vitest reads which fixtures a fixture uses from this pattern.
const it = test.extend("empty", { scope: "file" }, async ({}, { onCleanup }) => {
  const empty = await createTestDatabase({ migrated: false });
  onCleanup(() => empty.drop());
  // Migrations go to the server itself, never through the suite's pooler.
  return { ...empty, url: directUrlOf(empty) };
});

describe("npm run migrate", () => {
  // A developer's .env could set DATABASE_URL.
  it.skipIf(existsSync(`${REPO_ROOT}.env`))("refuses without DATABASE_URL and says what it needs", async () => {
    const { code, out } = await migrate({});
    expect(code).toBe(1);
    expect(out).toContain("DATABASE_URL is not set");
  });

  it("applies every migration to DATABASE_URL, then finds nothing pending", async ({ empty }) => {
    const local = (await readMigrations(defaultMigrationsDir())).map((m) => m.name);
    const first = await migrate({ DATABASE_URL: empty.url });
    expect(first.code, first.out).toBe(0);
    expect(first.out).toContain(`Applied migrations: ${local.join(", ")}`);
    const rows = await withClient(empty.url, (c) =>
      c.query<{ migration_name: string }>(`SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL ORDER BY migration_name`),
    );
    expect(rows.rows.map((r) => r.migration_name)).toEqual(local);

    const again = await migrate({ DATABASE_URL: empty.url });
    expect(again.code, again.out).toBe(0);
    expect(again.out).toContain("No pending migrations.");
  });

  it("migrates DIRECT_DATABASE_URL when DATABASE_URL goes through a pooler", async ({ empty }) => {
    // DATABASE_URL names a server that does not answer: only the direct URL may be used.
    const first = await migrate({ DATABASE_URL: "postgresql://postgres@127.0.0.1:1/nowhere", DIRECT_DATABASE_URL: empty.url });
    expect(first.code, first.out).toBe(0);
    expect(first.out).toMatch(/Applied migrations:|No pending migrations\./);
  });
});
