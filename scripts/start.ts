// `npm start` / `npm run dev`: one command from a fresh checkout to a running app.
// DATABASE_URL set: use that server. Unset: start the embedded PostgreSQL under .data/.
// Either way migrations are applied first (safe when two processes start at once).
import { existsSync } from "node:fs";
import path from "node:path";
import { databaseFromEnv, type DatabaseUrls, directUrlOf } from "../server/db/client";
import { startDetachedEmbeddedPostgres } from "../server/db/embedded";
import { applyMigrations } from "../server/db/migrate";
import { parseEnv } from "../server/env";
import { createLogger } from "../server/log";
import { startAppServer } from "../server/main";
import { nextBuild } from "./next-build";

const root = path.resolve(import.meta.dirname, "..");
const dev = process.argv.includes("--dev");
/** Runtime and API only, no pages (headless hosts, the shutdown test). */
const pages = !process.argv.includes("--no-pages");

async function main() {
  // A local .env (see .env.example) fills in what the shell did not set.
  if (existsSync(path.join(root, ".env"))) process.loadEnvFile(path.join(root, ".env"));
  const env = parseEnv();
  // JSON lines (pino); pretty for a person in `npm run dev`.
  const logger = createLogger({
    pretty: dev,
    level: env.LOG_LEVEL,
    secrets: [env.OPENAI_API_KEY, env.ANTHROPIC_API_KEY, env.AUTH_SECRET, env.MCP_SECRETS_KEY, env.METRICS_TOKEN],
  });
  const log = (line: string) => logger.info(line);

  let database: DatabaseUrls | null = env.DATABASE_URL ? databaseFromEnv(env) : null;
  let embedded: Awaited<ReturnType<typeof startDetachedEmbeddedPostgres>> | null = null;
  if (!database) {
    log(`DATABASE_URL is not set: starting the embedded PostgreSQL in ${env.EMBEDDED_PG_DIR}`);
    embedded = await startDetachedEmbeddedPostgres({
      dataDir: path.resolve(root, env.EMBEDDED_PG_DIR),
      port: env.EMBEDDED_PG_PORT,
      log,
    });
    database = { url: embedded.url };
  }
  // Migrations hold a session lock: never through a transaction-mode pooler.
  const { applied } = await applyMigrations(directUrlOf(database), { log });
  if (applied.length > 0) log(`Applied migrations: ${applied.join(", ")}`);

  // A production start needs a build; make the first `npm start` on a fresh checkout work.
  if (pages && !dev && !existsSync(path.join(root, ".next", "BUILD_ID"))) {
    log("No production build yet: running `next build` once (later: `npm run build`).");
    nextBuild(root);
  }

  const server = await startAppServer({ env, database, dev, pages, logger });
  log(`Agent Teams is ready on ${server.url}`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: shutting down…`);
    const force = setTimeout(() => process.exit(1), 15_000 + env.SHUTDOWN_DRAIN_MS);
    force.unref();
    // Readiness fails first, so a load balancer stops sending new work while requests finish.
    server.drain();
    if (env.SHUTDOWN_DRAIN_MS > 0) {
      log(`draining for ${env.SHUTDOWN_DRAIN_MS} ms (readiness answers 503)`);
      await new Promise((resolve) => setTimeout(resolve, env.SHUTDOWN_DRAIN_MS));
    }
    // The database stops last: turns are closed and leases released while it still runs.
    try {
      await server.close();
      log("Agent Teams stopped.");
      await embedded?.stop();
    } finally {
      process.exit(0);
    }
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
