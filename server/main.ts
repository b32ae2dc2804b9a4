import { randomUUID } from "node:crypto";
import http from "node:http";
import path from "node:path";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { fromNodeHeaders, toNodeHandler } from "better-auth/node";
import next from "next";
import { createDb, type DatabaseUrls } from "./db/client";
import { teamLimitsOf, workspaceLimitsOf, type Env } from "./env";
import { isDownload, serveDownload } from "./http/downloads";
import { answerFailure, RETRY_AFTER_SECONDS } from "./http/failure";
import { heldRequests } from "./http/held-requests";
import { bodyRefusal, checkRequest, clientAddress, contentSecurityPolicy, newNonce, refuse, setSecurityHeaders, webPolicy } from "./http/security";
import { LIMITS } from "../shared/limits";
import { ActivityHub } from "./live/activity";
import { CLIENT_IP_HEADER, createAuth } from "./people/auth";
import { authSecretOf } from "./people/instance";
import { personFromHeaders, type Person } from "./people/person";
import { ssoConfigOf } from "./people/sso";
import { availableModels, createModelResolver, priceOf, type ModelResolver } from "./models/registry";
import { runtimeConfigFromEnv, type RuntimeConfig } from "./runtime/config";
import { Runtime } from "./runtime/runtime";
import { createTeamLayer } from "./team-layer";
import { teamPlaybook } from "./team/playbook";
import { MCP_PATH, serveMcp } from "./mcp-server/http";
import { readMcpServersFile } from "./mcp/config-file";
import { createHealth } from "./http/health";
import { createMetrics, routeOf } from "./http/metrics";
import { createTracing } from "./http/tracing";
import { createLogger, type Logger } from "./log";
import { MAX_BATCH_SIZE } from "../shared/batch";
import { isUnavailable } from "./trpc/init";
import { appRouter } from "./trpc/root";

// The app server: one Node process hosting the agent runtime, accounts (Better Auth) under
// /api/auth, the tRPC API (HTTP + SSE) under /api/trpc, and the Next.js pages for everything
// else. Every request first passes the web layer's checks (http/security.ts).

export interface AppServerOptions {
  env: Env;
  /** DATABASE_URL, and DIRECT_DATABASE_URL when DATABASE_URL goes through a pooler. */
  database: DatabaseUrls;
  /** Next dev mode (hot reload) instead of the production build. */
  dev?: boolean;
  /** Serve the Next pages (off for API-only processes, e.g. runtime tests). */
  pages?: boolean;
  config?: Partial<RuntimeConfig>;
  /** Replaces the environment's models (bench/capacity.ts times a paced keyless model). */
  resolveModel?: ModelResolver;
  /** The process's log (server/log.ts); unset, one is made that writes JSON lines to `log`, or stdout. */
  logger?: Logger;
  /** Receives each JSON log line when no `logger` is given (tests). */
  log?: (line: string) => void;
}

export interface AppServer {
  /** The URL the server listens on (APP_URL may name another, public one). */
  url: string;
  runtime: Runtime;
  /** From now on /api/health/ready answers 503: balancers stop sending new work before close(). */
  drain(): void;
  close(): Promise<void>;
}

/** The largest request body: twice the file size limit (escaping) plus a batch's other input. */
function requestBodyLimit(env: Env): number {
  return 2 * env.WORKSPACE_MAX_FILE_BYTES + 1024 * 1024;
}

export async function startAppServer(opts: AppServerOptions): Promise<AppServer> {
  const logger =
    opts.logger ??
    createLogger({
      write: opts.log,
      level: opts.env.LOG_LEVEL,
      secrets: [opts.env.OPENAI_API_KEY, opts.env.ANTHROPIC_API_KEY, opts.env.AUTH_SECRET, opts.env.MCP_SECRETS_KEY, opts.env.METRICS_TOKEN],
    });
  const log = (line: string) => logger.info(line);
  const runtimeLog = logger.child({ component: "runtime" });
  const db = createDb(opts.database, opts.env.DATABASE_POOL_SIZE);
  const hub = new ActivityHub(opts.database);
  await hub.start();
  const runtime = new Runtime({
    db,
    hub,
    config: { ...runtimeConfigFromEnv(opts.env), ...opts.config },
    // Every session is a team member; the keyless model plays the team scenario.
    resolveModel: opts.resolveModel ?? createModelResolver(opts.env, { playbook: teamPlaybook }),
    priceOf: (c) => priceOf(opts.env, c),
    ...createTeamLayer(db, hub, {
      limits: teamLimitsOf(opts.env),
      workspaceLimits: workspaceLimitsOf(opts.env),
      models: availableModels(opts.env),
      mcp: { secretsKey: opts.env.MCP_SECRETS_KEY, configServers: readMcpServersFile(opts.env.MCP_SERVERS_FILE) },
      log: (line) => logger.warn({ component: "team" }, line),
    }),
    log: (line, fields) => {
      const { level = "info", ...where } = fields ?? {};
      runtimeLog[level](where, line);
    },
  });

  let pages: ReturnType<ReturnType<typeof next>["getRequestHandler"]> | null = null;
  let nextApp: ReturnType<typeof next> | null = null;
  if (opts.pages !== false) {
    // Nothing phones home, however the server was started (docs/SPEC.md §13).
    process.env.NEXT_TELEMETRY_DISABLED = "1";
    nextApp = next({ dev: opts.dev ?? false, dir: path.resolve(import.meta.dirname, ".."), hostname: opts.env.HOST, port: opts.env.PORT });
    await nextApp.prepare();
    pages = nextApp.getRequestHandler();
  }

  // The handler needs the listening port (PORT=0 picks one): until it is set, requests wait.
  const requests = heldRequests();
  const server = http.createServer(requests.listener);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.env.PORT, opts.env.HOST, () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : opts.env.PORT;
  const url = `http://${opts.env.HOST.includes(":") ? `[${opts.env.HOST}]` : opts.env.HOST}:${port}`;

  const appUrl = opts.env.APP_URL ?? url;
  const policy = webPolicy(appUrl, { local: !opts.env.APP_URL, dev: opts.dev });
  const auth = createAuth(db, {
    appUrl,
    origins: [...policy.origins],
    secret: opts.env.AUTH_SECRET ?? (await authSecretOf(db)),
    signInPerMinute: opts.env.AUTH_SIGN_IN_PER_MINUTE,
    sso: ssoConfigOf(opts.env),
  });
  const authHandler = toNodeHandler(auth);
  const trpc = createHTTPHandler({
    router: appRouter,
    basePath: "/api/trpc/",
    maxBatchSize: MAX_BATCH_SIZE,
    // Room for the largest file a person may save, JSON-escaped (a quote or backslash doubles).
    maxBodySize: requestBodyLimit(opts.env),
    // Answers carry people's data: no cache keeps them. Feeds keep `no-transform` (a proxy that
    // compresses an event stream holds its events back).
    responseMeta: ({ errors, type }) => ({
      headers: {
        "Cache-Control": type === "subscription" ? "no-store, no-transform" : "no-store",
        ...(errors.some(isUnavailable) ? { "Retry-After": String(RETRY_AFTER_SECONDS) } : {}),
      },
    }),
    onError: ({ error, path, req }) => {
      const fields = { component: "trpc", requestId: requestIds.get(req), procedure: path ?? "?" };
      if (isUnavailable(error)) return logger.warn(fields, `the database is unreachable (${error.cause?.message ?? error.message})`);
      if (error.code === "INTERNAL_SERVER_ERROR") logger.error(fields, `failed: ${error.cause?.stack ?? error.stack ?? error.message}`);
    },
    createContext: ({ req }) => ({ db, env: opts.env, hub, runtime, person: people.get(req) ?? null, traceparent: tracing.traceparent }),
  });
  /** Who sent each tRPC request, looked up before tRPC runs: a lookup the database's absence fails is a 503, feeds' too. */
  const people = new WeakMap<http.IncomingMessage, Person | null>();
  const failed = (res: http.ServerResponse, what: string, e: unknown) => answerFailure(res, e, what, log, "Internal error; the details are in the server log");

  const health = createHealth(db);
  /** Each request's id (X-Request-Id: the caller's when it is a plain token, else a new one). */
  const requestIds = new WeakMap<http.IncomingMessage, string>();
  const tracing = createTracing({
    endpoint: opts.env.OTEL_EXPORTER_OTLP_ENDPOINT,
    hub,
    db: db.sql,
    captureContent: opts.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
    log: (line) => logger.warn(line),
  });
  const metrics = createMetrics({ db, hub, token: opts.env.METRICS_TOKEN, residentAgents: () => runtime.residentIds().length });
  requests.serve((req, res) => {
    metrics.observe(req, res);
    const given = req.headers["x-request-id"];
    const requestId = typeof given === "string" && /^[\w.-]{1,64}$/.test(given) ? given : randomUUID();
    requestIds.set(req, requestId);
    res.setHeader("X-Request-Id", requestId);
    const started = performance.now();
    res.once("close", () => {
      // The path only (a query may carry a procedure's input), and probes at debug.
      const fields = { requestId, method: req.method, path: req.url?.split("?")[0], status: res.statusCode, ms: Math.round(performance.now() - started) };
      if (req.url?.startsWith("/api/health/")) logger.debug(fields, "request");
      else logger.info(fields, "request");
    });
    tracing.request(req, res, routeOf(req.url), () => handle(req, res));
  });
  /** Everything after the request's id, log line and span: the web checks, then the route. */
  function handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    // Probes first: a balancer's or a scraper's comes with its own Host header; health reveals
    // only states, metrics answer only to METRICS_TOKEN.
    if (health.serve(req, res) || metrics.serve(req, res)) return;
    const nonce = newNonce();
    const csp = contentSecurityPolicy(nonce, policy);
    setSecurityHeaders(res, csp);
    const mcp = req.url === MCP_PATH || req.url?.startsWith(`${MCP_PATH}?`);
    const refusal = checkRequest(req, policy);
    // MCP takes no cookie, only a bearer token: there is no ambient credential a foreign page
    // could borrow, so a request without one is answered 401 by the MCP handler, not 403 here.
    if (refusal && !(mcp && refusal.code === "CROSS_SITE_REQUEST")) return refuse(req, res, refusal);
    // Rate limits key on the client's address (the socket's, or the trusted proxy's word for it).
    req.headers[CLIENT_IP_HEADER] = clientAddress(req, opts.env.TRUST_PROXY);
    if (req.url?.startsWith("/api/auth/")) {
      const tooLarge = bodyRefusal(req, LIMITS.authBodyBytes);
      if (tooLarge) return refuse(req, res, tooLarge);
      // The library answers its own refusals; anything else it throws (onAPIError.throw) lands here.
      return void authHandler(req, res).catch((e: unknown) => failed(res, "auth", e));
    }
    if (req.url?.startsWith("/api/trpc/")) {
      return void personFromHeaders(auth, db, fromNodeHeaders(req.headers)).then(
        (person) => {
          people.set(req, person);
          return trpc(req, res);
        },
        (e: unknown) => failed(res, "trpc", e),
      );
    }
    if (mcp) {
      const tooLarge = bodyRefusal(req, requestBodyLimit(opts.env));
      if (tooLarge) return refuse(req, res, tooLarge);
      return void personFromHeaders(auth, db, fromNodeHeaders(req.headers))
        .then((person) => serveMcp(req, res, { db, env: opts.env, hub, runtime }, person))
        .catch((e: unknown) => failed(res, "mcp", e));
    }
    if (isDownload(req.url)) {
      return void serveDownload(req, res, { db, person: () => personFromHeaders(auth, db, fromNodeHeaders(req.headers)) }, log);
    }
    if (pages) {
      // Next reads the nonce from the request's policy and puts it on its scripts.
      req.headers["content-security-policy"] = csp;
      return void pages(req, res);
    }
    res.statusCode = 404;
    res.end("Not found");
  }

  await runtime.start();

  return {
    url,
    runtime,
    drain: () => health.drain(),
    async close() {
      // Stop taking requests, end live streams, then let agents close their turns.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await runtime.stop();
      await tracing.close();
      await hub.close();
      await nextApp?.close();
      await db.$disconnect();
    },
  };
}
