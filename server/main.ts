import http from "node:http";
import path from "node:path";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import next from "next";
import { createDb } from "./db/client";
import { teamLimitsOf, type Env } from "./env";
import { ActivityHub } from "./live/activity";
import { createModelResolver } from "./models/registry";
import { runtimeConfigFromEnv, type RuntimeConfig } from "./runtime/config";
import { Runtime } from "./runtime/runtime";
import { createTeamLayer } from "./team/team-layer";
import { teamPlaybook } from "./team/playbook";
import { MAX_BATCH_SIZE } from "./trpc/batch";
import { appRouter } from "./trpc/root";

// The app server: one Node process hosting the agent runtime, the tRPC API (HTTP + SSE) under
// /api/trpc, and the Next.js pages for everything else.

export interface AppServerOptions {
  env: Env;
  databaseUrl: string;
  /** Next dev mode (hot reload) instead of the production build. */
  dev?: boolean;
  /** Serve the Next pages (off for API-only processes, e.g. runtime tests). */
  pages?: boolean;
  config?: Partial<RuntimeConfig>;
  log?: (line: string) => void;
}

export interface AppServer {
  url: string;
  runtime: Runtime;
  close(): Promise<void>;
}

export async function startAppServer(opts: AppServerOptions): Promise<AppServer> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const db = createDb(opts.databaseUrl);
  const hub = new ActivityHub(opts.databaseUrl);
  await hub.start();
  const runtime = new Runtime({
    db,
    hub,
    config: { ...runtimeConfigFromEnv(opts.env), ...opts.config },
    // Every session is a team member; the keyless model plays the team scenario.
    resolveModel: createModelResolver(opts.env, { playbook: teamPlaybook }),
    ...createTeamLayer(db, hub, { limits: teamLimitsOf(opts.env) }),
    log: (line) => log(`[runtime] ${line}`),
  });

  const trpc = createHTTPHandler({
    router: appRouter,
    basePath: "/api/trpc/",
    maxBatchSize: MAX_BATCH_SIZE,
    onError: ({ error, path }) => {
      if (error.code === "INTERNAL_SERVER_ERROR") log(`[trpc] ${path ?? "?"} failed: ${error.cause?.stack ?? error.stack ?? error.message}`);
    },
    createContext: () => ({ db, env: opts.env, hub, runtime }),
  });

  let pages: ReturnType<ReturnType<typeof next>["getRequestHandler"]> | null = null;
  let nextApp: ReturnType<typeof next> | null = null;
  if (opts.pages !== false) {
    nextApp = next({ dev: opts.dev ?? false, dir: path.resolve(import.meta.dirname, ".."), hostname: opts.env.HOST, port: opts.env.PORT });
    await nextApp.prepare();
    pages = nextApp.getRequestHandler();
  }

  const server = http.createServer((req, res) => {
    if (req.url?.startsWith("/api/trpc/")) return trpc(req, res);
    if (pages) return void pages(req, res);
    res.statusCode = 404;
    res.end("Not found");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.env.PORT, opts.env.HOST, () => resolve());
  });
  await runtime.start();
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : opts.env.PORT;
  const url = `http://${opts.env.HOST.includes(":") ? `[${opts.env.HOST}]` : opts.env.HOST}:${port}`;

  return {
    url,
    runtime,
    async close() {
      // Stop taking requests, end live streams, then let agents close their turns.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await runtime.stop();
      await hub.close();
      await nextApp?.close();
      await db.$disconnect();
    },
  };
}
