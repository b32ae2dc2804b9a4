// `npm run migrate`: applies prisma/migrations to DIRECT_DATABASE_URL, else DATABASE_URL (shell or .env), with the
// project's runner (server/db/migrate.ts, compatible with `prisma migrate deploy`). `npm start`
// does the same on every start; this is for deployments that migrate as a step of their own.
import { existsSync } from "node:fs";
import path from "node:path";
import { redactUrl } from "../server/db/admin";
import { applyMigrations } from "../server/db/migrate";
import { parseEnv } from "../server/env";

const root = path.resolve(import.meta.dirname, "..");

async function main(): Promise<void> {
  if (existsSync(path.join(root, ".env"))) process.loadEnvFile(path.join(root, ".env"));
  const env = parseEnv();
  const url = env.DIRECT_DATABASE_URL ?? env.DATABASE_URL;
  if (!url) {
    throw new Error(
      "DATABASE_URL is not set: npm run migrate applies prisma/migrations to the database it names, " +
        "e.g. DATABASE_URL=postgresql://postgres@127.0.0.1:5432/agent_teams npm run migrate " +
        "(the embedded PostgreSQL of npm start is migrated by npm start itself)",
    );
  }
  console.log(`Migrating ${redactUrl(url)}`);
  const { applied } = await applyMigrations(url, { log: (line) => console.log(line) });
  console.log(applied.length > 0 ? `Applied migrations: ${applied.join(", ")}` : "No pending migrations.");
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
