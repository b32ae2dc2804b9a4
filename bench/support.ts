import { readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { z } from "zod";
import type { DatabaseUrls, Db } from "../server/db/client";
import { dropDatabase, withClient } from "../server/db/admin";
import { createTemporaryDatabase, temporaryDatabaseName, testServerUrl } from "../server/testing/temporary-db";
import { startPgBouncer } from "../server/testing/pgbouncer";

// What every benchmark shares: its own database (dropped again, also on Ctrl-C), the raw
// Postgres commit rate every figure is compared with, and small number helpers.

export const progress = (line: string) => process.stderr.write(`[bench] ${line}\n`);
export const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The Node options `npm start` gives the app server (package.json's start script, up to its
 * script; `--import` excluded): a benchmark's app server process runs with the same.
 */
export function startNodeOptions(): string[] {
  const pkg = z.object({ scripts: z.object({ start: z.string() }) }).parse(JSON.parse(readFileSync(path.join(import.meta.dirname, "..", "package.json"), "utf8")));
  const args = pkg.scripts.start.split(/\s+/).slice(1);
  const options: string[] = [];
  for (let i = 0; i < args.length && args[i]!.startsWith("--"); i++) {
    if (args[i] === "--import") i++;
    else options.push(args[i]!);
  }
  return options;
}

/** Checks every 10 ms until `check` holds; throws after `timeoutMs`. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** Nearest-rank percentile of an ascending list (NaN when empty). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/** Rounded nearest-rank percentile of unsorted values; null when there are none. */
export function percentileOf(values: number[], p: number): number | null {
  return values.length === 0 ? null : round(percentile([...values].sort((a, b) => a - b), p));
}

/**
 * Opens every connection of a pool (each runs a statement), as a server's long-lived pool has
 * them: sends measured right after are not the ones that paid for connecting.
 */
export async function warmPool(db: Db, connections: number): Promise<void> {
  await Promise.all(Array.from({ length: connections }, () => db.sqlTx((tx) => tx.$queryRaw`SELECT pg_sleep(0.01)`)));
}

/** Single-row autocommit INSERTs per second over `connections` connections for `ms`. */
export async function commitRate(url: string, connections: number, ms: number): Promise<number> {
  const clients = await Promise.all(
    Array.from({ length: connections }, async () => {
      const c = new pg.Client({ connectionString: url });
      c.on("error", () => undefined);
      await c.connect();
      return c;
    }),
  );
  try {
    await clients[0]!.query(
      "CREATE TABLE IF NOT EXISTS bench_commits (id bigserial PRIMARY KEY, conn int NOT NULL, at timestamptz NOT NULL DEFAULT now())",
    );
    let count = 0;
    const start = performance.now();
    const deadline = start + ms;
    await Promise.all(
      clients.map(async (c, i) => {
        while (performance.now() < deadline) {
          await c.query({ name: "bench_insert", text: "INSERT INTO bench_commits (conn) VALUES ($1)", values: [i] });
          count += 1;
        }
      }),
    );
    return count / ((performance.now() - start) / 1000);
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  }
}

/** The server's version and commit durability, printed with the figures. */
export async function serverInfo(url: string): Promise<{ postgres?: string; synchronousCommit?: string }> {
  const { rows } = await withClient(url, (c) =>
    c.query<{ server_version: string; synchronous_commit: string }>(
      "SELECT current_setting('server_version') AS server_version, current_setting('synchronous_commit') AS synchronous_commit",
    ),
  );
  return { postgres: rows[0]?.server_version, synchronousCommit: rows[0]?.synchronous_commit };
}

/** Runs `fn` against a fresh, migrated database that is dropped afterwards (and on Ctrl-C). */
export async function withBenchDatabase<T>(prefix: string, fn: (database: DatabaseUrls & { url: string }) => Promise<T>): Promise<T> {
  const adminUrl = testServerUrl();
  const name = temporaryDatabaseName(`${prefix}_`);
  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
    progress("interrupted: dropping the bench database");
    void dropDatabase(adminUrl, name).finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    progress(`creating database ${name}`);
    const db = await createTemporaryDatabase(adminUrl, name);
    // BENCH_POOLER=pgbouncer: the app's statements through a PgBouncer in transaction mode.
    // BENCH_POOLER=unnamed: direct, but prepared as through a pooler (what naming saves).
    const pooler = process.env.BENCH_POOLER;
    const bouncer = pooler === "pgbouncer" ? await startPgBouncer(adminUrl, { poolSize: 40 }) : null;
    if (bouncer) progress(`through PgBouncer (transaction mode) on port ${bouncer.port}`);
    // A URL that differs from the direct one only by a parameter counts as a pooler's.
    const tagged = new URL(db.url);
    tagged.searchParams.set("application_name", "bench");
    const unnamed = pooler === "unnamed" ? { url: tagged.toString(), directUrl: db.url } : null;
    try {
      return await fn(bouncer ? { url: bouncer.through(db.url), directUrl: db.url } : (unnamed ?? db));
    } finally {
      await bouncer?.stop();
      if (!interrupted) {
        progress(`dropping database ${name}`);
        await db.drop();
      }
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/** Entry point wrapper: prints the failure and exits non-zero. */
export function runBench(main: () => Promise<void>): void {
  main().catch((e: unknown) => {
    process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
