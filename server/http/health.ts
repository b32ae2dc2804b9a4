import type http from "node:http";
import { z } from "zod";
import type { Db } from "../db/client";
import { defaultMigrationsDir, readMigrations } from "../db/migrate";

// Health for load balancers and orchestrators, answered before any other check (a balancer's
// probe comes with its own Host header and no cookie) and revealing nothing but states:
//   /api/health/live   200 while the process serves requests at all
//   /api/health/ready  200 when the database answers within READY_TIMEOUT_MS, every migration of
//                      this build is applied, and the process is not draining; 503 otherwise,
//                      with which check failed
// On SIGTERM the process drains: ready turns 503 first, so balancers stop sending new work, then
// the app closes (scripts/start.ts).

export const LIVE_PATH = "/api/health/live";
export const READY_PATH = "/api/health/ready";
const READY_TIMEOUT_MS = 2_000;

const AppliedRows = z.array(z.object({ migration_name: z.string() }));

export interface Health {
  /** Answers the request if it is a health probe; false otherwise. */
  serve(req: http.IncomingMessage, res: http.ServerResponse): boolean;
  /** From now on ready answers 503 (draining). */
  drain(): void;
}

export function createHealth(db: Db, migrationsDir = defaultMigrationsDir()): Health {
  let draining = false;
  let expected: Promise<string[]> | null = null;

  async function checks(): Promise<{ database: string; migrations: string; draining: boolean }> {
    expected ??= readMigrations(migrationsDir).then((m) => m.map((x) => x.name));
    let database = "ok";
    let migrations = "ok";
    try {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const rows = await Promise.race([
        db.sql.$queryRaw`SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
        }),
      ]).finally(() => clearTimeout(timer));
      const applied = new Set(AppliedRows.parse(rows).map((r) => r.migration_name));
      const missing = (await expected).filter((name) => !applied.has(name));
      if (missing.length > 0) migrations = `${missing.length} not applied`;
    } catch (e) {
      database = e instanceof Error ? e.message.split("\n")[0]!.slice(0, 200) : "unreachable";
      migrations = "unknown";
    }
    return { database, migrations, draining };
  }

  const answer = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "Content-Type": "application/json", "Cache-Control": "no-store" });
    res.end(JSON.stringify(body));
  };

  return {
    serve(req, res) {
      const path = req.url?.split("?")[0];
      if (path === LIVE_PATH) {
        answer(res, 200, { status: "live" });
        return true;
      }
      if (path !== READY_PATH) return false;
      void checks().then(
        (c) => {
          const ready = c.database === "ok" && c.migrations === "ok" && !c.draining;
          answer(res, ready ? 200 : 503, { status: ready ? "ready" : c.draining ? "draining" : "not ready", checks: c });
        },
        () => answer(res, 503, { status: "not ready" }),
      );
      return true;
    },
    drain() {
      draining = true;
    },
  };
}
