import { timingSafeEqual } from "node:crypto";
import type http from "node:http";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { z } from "zod";
import type { Db } from "../db/client";
import type { ActivityHub } from "../live/activity";

// /metrics in Prometheus text (prom-client), for whoever holds METRICS_TOKEN (as a bearer token;
// unset, there is no /metrics). Counted in this process: HTTP requests and their durations, open
// live feeds, turns, steps, tool calls by tool and outcome, model tokens, cost and retries (from
// the session events this process appends, as it announces them). Read at scrape time: agents
// driven here (leases held), database pool use, approvals waiting and the mailbox's send →
// delivery latency (both for the whole instance, from the database).

export const METRICS_PATH = "/metrics";
const PREFIX = "agent_teams_";
/** Seconds from a team message's send to its delivery, as buckets. */
const MAILBOX_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export interface Metrics {
  /** Answers /metrics (true), or leaves the request alone (false). */
  serve(req: http.IncomingMessage, res: http.ServerResponse): boolean;
  /** Counts one HTTP request when its response ends. */
  observe(req: http.IncomingMessage, res: http.ServerResponse): void;
}

/** The coarse route a request is counted under (never its path: ids would explode the series). */
export function routeOf(url: string | undefined): string {
  const path = url?.split("?")[0] ?? "";
  for (const [prefix, route] of [
    ["/api/trpc/", "trpc"],
    ["/api/auth/", "auth"],
    ["/api/mcp", "mcp"],
    ["/api/health/", "health"],
    ["/api/files/", "download"],
    ["/metrics", "metrics"],
    ["/_next/", "assets"],
  ] as const) {
    if (path.startsWith(prefix)) return route;
  }
  return "page";
}

const WaitingRows = z.array(z.object({ waiting: z.number() }));
const BucketRows = z.array(z.object({ w: z.number(), n: z.number(), sum: z.number() }));

/** The mailbox histogram in Prometheus text, from the database's counts (instance-wide, cumulative). */
async function mailboxHistogram(db: Db): Promise<string> {
  // w: how many bucket bounds lie at or below the latency (0: under the first).
  const rows = BucketRows.parse(
    await db.sql.$queryRaw`SELECT width_bucket(d, ${MAILBOX_BUCKETS}::float8[]) AS w, count(*)::int AS n, sum(d)::float8 AS sum
      FROM (SELECT extract(epoch FROM delivered_at - created_at)::float8 AS d FROM team_messages WHERE delivered_at IS NOT NULL) m GROUP BY 1`,
  );
  const name = `${PREFIX}mailbox_delivery_seconds`;
  const count = rows.reduce((t, r) => t + r.n, 0);
  const lines = [
    `# HELP ${name} Team messages' time from send to delivery (the instance: every delivered message)`,
    `# TYPE ${name} histogram`,
    ...MAILBOX_BUCKETS.map((le, i) => `${name}_bucket{le="${le}"} ${rows.filter((r) => r.w <= i).reduce((t, r) => t + r.n, 0)}`),
    `${name}_bucket{le="+Inf"} ${count}`,
    `${name}_sum ${rows.reduce((t, r) => t + r.sum, 0)}`,
    `${name}_count ${count}`,
  ];
  return `${lines.join("\n")}\n`;
}

export function createMetrics(opts: { db: Db; hub: ActivityHub; token: string | undefined; residentAgents: () => number }): Metrics {
  const registry = new Registry();
  const c = <T extends string>(name: string, help: string, labelNames: readonly T[] = []) =>
    new Counter({ name: PREFIX + name, help, labelNames, registers: [registry] });
  const requests = c("http_requests_total", "HTTP requests by route, method and status", ["route", "method", "status"]);
  const durations = new Histogram({
    name: `${PREFIX}http_request_duration_seconds`,
    help: "HTTP request durations by route (live feeds: until they close)",
    labelNames: ["route"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  const feeds = new Gauge({ name: `${PREFIX}live_feeds_open`, help: "Live feeds (event streams) open on this process", registers: [registry] });
  const turns = c("turns_total", "Turns ended on this process, by reason", ["reason"]);
  const steps = c("steps_total", "Steps started on this process");
  const toolCalls = c("tool_calls_total", "Tool calls by tool and outcome (ok, or the error code)", ["tool", "outcome"]);
  const tokens = c("model_tokens_total", "Model tokens by model and kind (input, output, cached_input)", ["model", "kind"]);
  const cost = c("model_cost_total", "Model cost in the price table's currency, by model", ["model"]);
  const retries = c("model_retries_total", "Model request retries by provider", ["provider"]);

  // What the scrape reads.
  new Gauge({
    name: `${PREFIX}leases_held`,
    help: "Agents this process drives (their leases held)",
    registers: [registry],
    collect() {
      this.set(opts.residentAgents());
    },
  });
  new Gauge({
    name: `${PREFIX}db_pool_connections`,
    help: "This process's database connections by state (open, idle, waiting callers, max)",
    labelNames: ["state"],
    registers: [registry],
    collect() {
      const p = opts.db.poolUse();
      this.set({ state: "open" }, p.total);
      this.set({ state: "idle" }, p.idle);
      this.set({ state: "waiting" }, p.waiting);
      this.set({ state: "max" }, p.max);
    },
  });
  new Gauge({
    name: `${PREFIX}approvals_waiting`,
    help: "Tool calls waiting for approval and questions waiting for an answer (the instance)",
    registers: [registry],
    async collect() {
      const rows = WaitingRows.parse(await opts.db.sql.$queryRaw`SELECT count(*)::int AS waiting FROM approvals WHERE status = 'pending'`);
      this.set(rows[0]?.waiting ?? 0);
    },
  });

  // Session events this process appended, as it announces them (other processes count theirs).
  const providerOf = new Map<string, string>();
  opts.hub.on("*", (a) => {
    const { sessionId } = a;
    for (const { payload: p } of a.events ?? []) {
      if (p.kind === "turn_end") turns.inc({ reason: p.reason });
      else if (p.kind === "step_start") steps.inc();
      else if (p.kind === "tool_result") toolCalls.inc({ tool: p.toolName, outcome: p.isError ? (p.errorCode ?? "error") : "ok" });
      else if (p.kind === "assistant_message" && p.usage) {
        providerOf.set(sessionId, p.model.split(":")[0] ?? "unknown");
        tokens.inc({ model: p.model, kind: "input" }, p.usage.inputTokens);
        tokens.inc({ model: p.model, kind: "output" }, p.usage.outputTokens);
        if (p.usage.cachedInputTokens) tokens.inc({ model: p.model, kind: "cached_input" }, p.usage.cachedInputTokens);
        if (p.costNanos) cost.inc({ model: p.model }, p.costNanos / 1e9);
      } else if (p.kind === "model_wait" && p.wait.kind === "retry") retries.inc({ provider: providerOf.get(sessionId) ?? "unknown" });
    }
  });

  const authorised = (req: http.IncomingMessage) => {
    const given = Buffer.from(/^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1] ?? "");
    const want = Buffer.from(opts.token ?? "");
    return opts.token !== undefined && given.length === want.length && timingSafeEqual(given, want);
  };

  return {
    serve(req, res) {
      if (req.url?.split("?")[0] !== METRICS_PATH) return false;
      if (!opts.token) {
        res.writeHead(404).end("Not found");
        return true;
      }
      if (!authorised(req)) {
        res.writeHead(401, { "WWW-Authenticate": 'Bearer realm="metrics"', "Content-Type": "text/plain" }).end("Unauthorized: send METRICS_TOKEN as Authorization: Bearer");
        return true;
      }
      void Promise.all([registry.metrics(), mailboxHistogram(opts.db)]).then(
        ([text, mailbox]) => res.writeHead(200, { "Content-Type": registry.contentType, "Cache-Control": "no-store" }).end(text + mailbox),
        () => res.writeHead(503, { "Content-Type": "text/plain" }).end("metrics unavailable: the database did not answer"),
      );
      return true;
    },
    observe(req, res) {
      const route = routeOf(req.url);
      const end = durations.startTimer({ route });
      const stream = req.headers.accept?.includes("text/event-stream") ?? false;
      if (stream) feeds.inc();
      res.once("close", () => {
        end();
        if (stream) feeds.dec();
        requests.inc({ route, method: req.method ?? "GET", status: String(res.statusCode) });
      });
    },
  };
}
