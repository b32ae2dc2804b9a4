// The server Playwright starts (playwright.config.ts): a fresh database on the test server,
// a production build, and the app on PORT. The database is dropped again on exit.
import { randomBytes } from "node:crypto";
import path from "node:path";
import { applyMigrations } from "../server/db/migrate";
import {
  createTemporaryDatabase,
  creatorGone,
  dropOrphanedDatabases,
  temporaryDatabaseName,
  testServerUrl,
  type TemporaryDatabase,
} from "../server/testing/temporary-db";
import { parseEnv } from "../server/env";
import { startAppServer } from "../server/main";
import { nextBuild } from "./next-build";

const root = path.resolve(import.meta.dirname, "..");

/**
 * The keyless model with a price, so the room and home show costs (e2e/cost.spec.ts), and a
 * second model to pick for a teammate (and a third with a long id and label): offered (their
 * provider is configured) but never reached (port 9 refuses connections), so nothing leaves
 * the machine.
 */
const E2E_MODELS = {
  OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
  MODELS: JSON.stringify([
    { provider: "scripted", model: "keyless", label: "Keyless demo", price: { input: 1, output: 5 } },
    { provider: "openai-compatible", model: "e2e-unreachable", label: "Unreachable second model", price: { input: 0.5, output: 2 } },
    // Long id and label: the layout test gives it to a teammate (e2e/layout.spec.ts).
    { provider: "openai-compatible", model: `e2e-${"long-model-id-".repeat(8)}end`, label: `A model label long enough to wrap ${"L".repeat(60)}` },
  ]),
};
const PREFIX = "at_e2e_";

async function main() {
  // E2E_DATABASE_URL: serve an existing database and keep it (restart tests reuse one);
  // E2E_DIRECT_DATABASE_URL: that database's server itself, when the first goes through a pooler.
  const given = process.env.E2E_DATABASE_URL;
  const direct = process.env.E2E_DIRECT_DATABASE_URL;
  let own: TemporaryDatabase | null = null;
  let url: string;
  if (given) {
    url = given;
    await applyMigrations(direct ?? url);
  } else {
    const adminUrl = testServerUrl();
    // Databases of earlier e2e servers that were killed before they could drop them.
    await dropOrphanedDatabases(adminUrl, PREFIX, creatorGone).catch((e: unknown) => console.warn(String(e)));
    own = await createTemporaryDatabase(adminUrl, temporaryDatabaseName(PREFIX));
    url = own.url;
  }

  // Always build: a stale .next from an older checkout would test old pages.
  if (process.env.E2E_SKIP_BUILD !== "1") {
    nextBuild(root, ["ignore", "inherit", "inherit"]);
  }

  // A key of this run's own, so MCP servers can be given tokens.
  const mcpKey = randomBytes(32).toString("base64");
  const env = parseEnv({ SCRIPTED_MODEL_DELAY_MS: "60", HOST: "127.0.0.1", MCP_SECRETS_KEY: mcpKey, LOG_LEVEL: "warn", ...E2E_MODELS, ...process.env, DATABASE_URL: url });
  const server = await startAppServer({ env, database: { url, ...(given && direct ? { directUrl: direct } : {}) } });
  console.log(`e2e server ready on ${server.url}`);

  const stop = async () => {
    await server.close().catch(() => undefined);
    await own?.drop().catch(() => undefined);
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
