// The server Playwright starts (playwright.config.ts): a fresh database on the test server,
// a production build, and the app on PORT. The database is dropped again on exit.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { applyMigrations, createDatabase, databaseUrl, dropDatabase } from "../server/db/migrate";
import { parseEnv } from "../server/env";
import { startAppServer } from "../server/main";

const root = path.resolve(import.meta.dirname, "..");
const adminUrl = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

/** Databases of earlier e2e servers that were killed before they could drop them. */
async function dropOrphans() {
  const { default: pg } = await import("pg");
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    const { rows } = await c.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE 'at\\_e2e\\_%'");
    for (const { datname } of rows) {
      const pid = Number(datname.split("_")[3]);
      if (!Number.isInteger(pid) || !isAlive(pid)) await dropDatabase(adminUrl, datname).catch(() => undefined);
    }
  } finally {
    await c.end();
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function main() {
  // E2E_DATABASE_URL: serve an existing database and keep it (restart tests reuse one).
  const given = process.env.E2E_DATABASE_URL;
  const name = `at_e2e_${Date.now().toString(36)}_${process.pid}_${randomBytes(3).toString("hex")}`;
  if (!given) {
    await dropOrphans();
    await createDatabase(adminUrl, name);
  }
  const url = given ?? databaseUrl(adminUrl, name);
  await applyMigrations(url);

  // Always build: a stale .next from an older checkout would test old pages.
  if (process.env.E2E_SKIP_BUILD !== "1") {
    const r = spawnSync("npx", ["next", "build"], { cwd: root, stdio: ["ignore", "inherit", "inherit"] });
    if (r.status !== 0) throw new Error("next build failed");
  }

  const env = parseEnv({ SCRIPTED_MODEL_DELAY_MS: "60", HOST: "127.0.0.1", ...process.env, DATABASE_URL: url });
  const server = await startAppServer({ env, databaseUrl: url });
  console.log(`e2e server ready on ${server.url}`);

  const stop = async () => {
    await server.close().catch(() => undefined);
    if (!given) await dropDatabase(adminUrl, name).catch(() => undefined);
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
