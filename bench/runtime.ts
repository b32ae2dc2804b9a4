// Runtime throughput and steer latency against a real Postgres, next to the raw commit rate of
// the same server measured in the same run. Figures only, no assertions.
//
//   npm run bench:runtime          (TEST_DATABASE_URL, default postgresql://postgres@127.0.0.1:5432/postgres)
//
// Creates its own database (migrated with the project's runner), drops it at the end, and
// prints ONE JSON object on stdout; progress goes to stderr. Knobs: BENCH_PROMPTS (prompts per
// agent, default 30: 32 agents run seconds of turns, not one second mostly start-up),
// BENCH_STEERS (steer samples, default 150), BENCH_COMMIT_MS (default 2000), BENCH_DB_POOL
// (connections, default the app server's DATABASE_POOL_SIZE default).
//
// - pgCommitRate: single-row INSERT autocommits with plain `pg`, 1 connection and 8 connections.
// - modelSteps: 1, 8 and 32 agents in one runtime (the product's default config and DB pool),
//   scripted model at zero delay, each agent given BENCH_PROMPTS queued prompts up front; a
//   prompt is one model step, so steps = assistant_message events. Wall time runs from
//   runtime.start() to the last turn_end (the wait for it looks at the sessions' rows only, so
//   the bench's polling does not load the database it measures); each figure is also given as a
//   ratio to the commit rates.
// - steer: one agent in an endless multi-step turn (scripted model at zero delay, a tool call
//   per step); steer items are committed via enqueue(mode 'steer') at random moments, and the
//   latency is the claimed user_message's created_at minus the moment enqueue's transaction
//   resolved (both stamped by this process's clock).
// - budgetStop: one team of BENCH_BUDGET_MEMBERS sessions (default 8), each in an endless
//   multi-step turn (as steer); the team budget is set below the spend, and the figure is the
//   time from that commit to every member's turn having ended with reason `budget` (each stops
//   at its next step boundary, so it is bounded by a step's length, also printed). Then the
//   budget is removed, every member resumes, and the trial repeats (BENCH_BUDGET_TRIALS, 5).
// - retryOverhead: one agent on the OpenAI-compatible provider (the real SDK path and the
//   registry's resilient model) against the in-process fake provider; BENCH_RETRIES turns
//   answered at once, as many answered 429 with retry-after-ms: 20 first. A step's latency is
//   its step_start to its assistant_message (database clock); the overhead of a retry is the
//   retried step's latency minus the wait the provider asked for minus the plain steps' p50.
import os from "node:os";
import { createDb, type DatabaseUrls, directUrlOf, inTx, type Db } from "../server/db/client";
import { commitRate, percentile, percentileOf, progress, round, runBench, serverInfo, sleep, waitUntil, withBenchDatabase } from "./support";
import { parseEnv } from "../server/env";
import { asSessionId, type SessionId } from "../server/ids";
import { notifyActivity } from "../server/db/notify";
import { ActivityHub } from "../server/live/activity";
import { ModelChoiceSchema } from "../server/models/choice";
import { createModelResolver } from "../server/models/registry";
import { startFakeProviderServer } from "../server/models/testing/fake-provider-server";
import { readTail, ScriptedModel, type Playbook } from "../server/models/scripted";
import { runtimeConfigFromEnv, type RuntimeConfig } from "../server/runtime/config";
import { enqueue } from "../server/runtime/inbox";
import { Runtime, type RuntimeOptions } from "../server/runtime/runtime";
import { reserveStep } from "../server/team/budget";
import { createSession } from "../server/runtime/sessions";

const PROMPTS = Number(process.env.BENCH_PROMPTS ?? 30);
const STEERS = Number(process.env.BENCH_STEERS ?? 150);
const COMMIT_MS = Number(process.env.BENCH_COMMIT_MS ?? 2000);
const RETRIES = Number(process.env.BENCH_RETRIES ?? 40);
const AGENT_COUNTS = [1, 8, 32];
const BUDGET_MEMBERS = Number(process.env.BENCH_BUDGET_MEMBERS ?? 8);
const BUDGET_TRIALS = Number(process.env.BENCH_BUDGET_TRIALS ?? 5);
/** The app server's pool (DATABASE_POOL_SIZE's default) unless BENCH_DB_POOL says otherwise. */
const DB_POOL = Number(process.env.BENCH_DB_POOL ?? parseEnv({}).DATABASE_POOL_SIZE);


// ------------------------------------------------------------------ raw Postgres commit rate

// ------------------------------------------------------------------ runtime scenarios

interface Host {
  db: Db;
  hub: ActivityHub;
  runtime: Runtime;
  logs: string[];
  stop(): Promise<void>;
}

async function startHost(database: DatabaseUrls, config: RuntimeConfig, playbook?: Playbook, start = true, extra: Partial<RuntimeOptions> = {}): Promise<Host> {
  const db = createDb(database, DB_POOL);
  const hub = new ActivityHub(database);
  await hub.start();
  const model = new ScriptedModel({ delayMs: 0, playbook });
  const logs: string[] = [];
  const runtime = new Runtime({ db, hub, config, resolveModel: () => model, log: (l) => logs.push(l), ...extra });
  if (start) await runtime.start();
  return {
    db,
    hub,
    runtime,
    logs,
    async stop() {
      await runtime.stop();
      await hub.close();
      await db.$disconnect();
    },
  };
}

async function newSession(db: Db, title: string): Promise<SessionId> {
  const s = await createSession(db, { title, model: ModelChoiceSchema.parse({ provider: "scripted", model: "keyless" }) });
  return asSessionId(s.id);
}

async function modelSteps(database: DatabaseUrls, config: RuntimeConfig, agents: number, prompts: number) {
  const host = await startHost(database, config, undefined, false);
  const { db } = host;
  try {
    const ids = await Promise.all(Array.from({ length: agents }, (_, i) => newSession(db, `bench ${agents}x${prompts} #${i}`)));
    // Every prompt is queued before the runtime starts: the runtime's own throughput is measured.
    await Promise.all(
      ids.map((id) =>
        inTx(db, async (tx) => {
          for (let k = 0; k < prompts; k++) {
            await enqueue(tx, id, { mode: "queue", text: `Prompt ${k}: plan step ${k} of the picnic`, source: { kind: "human" } });
          }
        }),
      ),
    );
    const t0 = Date.now();
    await host.runtime.start();
    const total = agents * prompts;
    // Done when no session has input left or a turn open: a look at the sessions' rows only. (A
    // count of turn_end events scans every session's whole log, and polled every 10 ms it was
    // the database's busiest statement, competing with what is measured.)
    await waitUntil(
      async () => (await db.session.count({ where: { id: { in: ids }, OR: [{ activeTurnId: { not: null } }, { inbox: { some: {} } }] } })) === 0,
      120_000,
      `${total} turns`,
    );
    const steps = await db.sessionEvent.count({ where: { sessionId: { in: ids }, kind: "assistant_message" } });
    const last = await db.sessionEvent.findFirstOrThrow({
      where: { sessionId: { in: ids }, kind: "turn_end" },
      orderBy: { createdAt: "desc" },
      select: { createdAt: true },
    });
    const reasons = await db.sessionEvent.findMany({ where: { sessionId: { in: ids }, kind: "turn_end" }, select: { payload: true } });
    const notCompleted = reasons.filter((r) => (r.payload as { reason?: string }).reason !== "completed").length;
    const seconds = Math.max(1, last.createdAt.getTime() - t0) / 1000;
    return { agents, promptsPerAgent: prompts, turns: reasons.length, steps, notCompleted, seconds: round(seconds, 3), stepsPerSec: steps / seconds };
  } finally {
    await host.stop();
  }
}

/** Endless multi-step turn: a tool call every step, until a steer item says "/done". */
const spinPlaybook: Playbook = (request) => {
  if (request.purpose === "summary") return { text: "Summary." };
  const { inputs } = readTail(request.messages);
  if (inputs.includes("/done")) return { text: "Done." };
  return { text: "Working.", toolCalls: [{ toolName: "current_time", input: {} }] };
};

async function steerLatency(database: DatabaseUrls, config: RuntimeConfig, samples: number) {
  const host = await startHost(database, { ...config, maxStepsPerTurn: 1_000_000 }, spinPlaybook);
  // The steering side has its own pool, as a browser request or another agent's tool would.
  const client = createDb(database, 2);
  try {
    const id = await newSession(host.db, "bench steer");
    await inTx(client, (tx) => enqueue(tx, id, { mode: "queue", text: "/spin", source: { kind: "human" } }));
    await waitUntil(
      async () => (await client.sessionEvent.count({ where: { sessionId: id, kind: "step_start" } })) >= 3,
      30_000,
      "the spinning turn",
    );
    const committed = new Map<string, number>();
    for (let i = 0; i < samples; i++) {
      await sleep(2 + Math.random() * 18);
      const item = await inTx(client, (tx) =>
        enqueue(tx, id, { mode: "steer", text: `steer ${i}`, source: { kind: "system" } }),
      );
      committed.set(item.id, Date.now());
    }
    await inTx(client, (tx) => enqueue(tx, id, { mode: "steer", text: "/done", source: { kind: "system" } }));
    await waitUntil(
      async () => (await client.sessionEvent.count({ where: { sessionId: id, kind: "turn_end" } })) >= 1,
      60_000,
      "the spinning turn to end",
    );
    const events = await client.sessionEvent.findMany({
      where: { sessionId: id },
      orderBy: { seq: "asc" },
      select: { kind: true, messageId: true, createdAt: true },
    });
    const latencies: number[] = [];
    let early = 0;
    for (const e of events) {
      const at = e.kind === "user_message" && e.messageId ? committed.get(e.messageId) : undefined;
      if (at === undefined) continue;
      const ms = e.createdAt.getTime() - at;
      if (ms < 0) early += 1;
      latencies.push(Math.max(0, ms));
    }
    latencies.sort((a, b) => a - b);
    const stepStarts = events.filter((e) => e.kind === "step_start").map((e) => e.createdAt.getTime());
    const stepMs = stepStarts.slice(1).map((t, i) => t - stepStarts[i]!).sort((a, b) => a - b);
    return {
      samples: latencies.length,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      maxMs: latencies.at(-1) ?? NaN,
      meanMs: round(latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length), 2),
      /** Claims stamped before enqueue's promise resolved in this process (counted as 0 ms). */
      stampedBeforeResolve: early,
      steps: stepStarts.length,
      stepP50Ms: percentile(stepMs, 50),
      stepP99Ms: percentile(stepMs, 99),
    };
  } finally {
    await client.$disconnect();
    await host.stop();
  }
}

async function budgetStop(database: DatabaseUrls, config: RuntimeConfig, members: number, trials: number) {
  const host = await startHost(database, { ...config, maxStepsPerTurn: 1_000_000 }, spinPlaybook, true, { reserveStep });
  const { db } = host;
  try {
    const lead = await newSession(db, "bench budget");
    const ids = [lead];
    for (let i = 1; i < members; i++) {
      const s = await db.session.create({ data: { id: `ses_benchbudget${i}`, teamId: lead, memberName: `m${i}`, title: `m${i}`, model: { provider: "scripted", model: "keyless" } } });
      ids.push(asSessionId(s.id));
    }
    await inTx(db, async (tx) => {
      for (const id of ids) await enqueue(tx, id, { mode: "queue", text: "/spin", source: { kind: "human" } });
    });
    const stops: number[] = [];
    const perMember: number[] = [];
    const stepMs: number[] = [];
    for (let trial = 0; trial < trials; trial++) {
      // Every member well into a turn.
      const base = await db.sessionEvent.groupBy({ by: ["sessionId"], where: { sessionId: { in: ids }, kind: "step_start" }, _count: true });
      const before = new Map(base.map((r) => [r.sessionId, r._count]));
      await waitUntil(
        async () => {
          const now = await db.sessionEvent.groupBy({ by: ["sessionId"], where: { sessionId: { in: ids }, kind: "step_start" }, _count: true });
          return now.length === ids.length && now.every((r) => r._count >= (before.get(r.sessionId) ?? 0) + 3);
        },
        30_000,
        "every member spinning",
      );
      const ended = await db.sessionEvent.count({ where: { sessionId: { in: ids }, kind: "turn_end" } });
      await db.$executeRaw`UPDATE teams SET budget_tokens = 1 WHERE id = ${lead}`;
      const t0 = Date.now();
      await waitUntil(async () => (await db.sessionEvent.count({ where: { sessionId: { in: ids }, kind: "turn_end" } })) >= ended + ids.length, 30_000, "every member stopped");
      const ends = await db.sessionEvent.findMany({ where: { sessionId: { in: ids }, kind: "turn_end" }, orderBy: { seq: "desc" }, distinct: ["sessionId"], select: { createdAt: true } });
      const times = ends.map((e) => e.createdAt.getTime() - t0);
      stops.push(Math.max(...times));
      perMember.push(...times);
      const starts = await db.sessionEvent.findMany({ where: { sessionId: lead, kind: "step_start" }, orderBy: { seq: "desc" }, take: 20, select: { createdAt: true } });
      for (let i = 1; i < starts.length; i++) stepMs.push(starts[i - 1]!.createdAt.getTime() - starts[i]!.createdAt.getTime());
      // Remove the budget (as setBudget does: clear the stop, wake the members); each resumes from its notice.
      await db.$executeRaw`UPDATE teams SET budget_tokens = NULL, budget_stopped_at = NULL WHERE id = ${lead}`;
      for (const id of ids) await notifyActivity(db, id, "inbox");
    }
    for (const a of [stops, perMember, stepMs]) a.sort((x, y) => x - y);
    return {
      members,
      trials,
      allStoppedP50Ms: percentile(stops, 50),
      allStoppedMaxMs: stops.at(-1) ?? NaN,
      memberStopP50Ms: percentile(perMember, 50),
      memberStopP95Ms: percentile(perMember, 95),
      stepP50Ms: percentile(stepMs, 50),
    };
  } finally {
    await host.stop();
  }
}

async function retryOverhead(database: DatabaseUrls, config: RuntimeConfig, samples: number) {
  const fake = await startFakeProviderServer();
  const RETRY_AFTER_MS = 20;
  // The product's retry settings, except a 1 ms backoff base: the provider's Retry-After sets the wait.
  const env = parseEnv({ OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: "sk-bench-not-a-key", MODEL_RETRY_BASE_MS: "1" });
  const host = await startHost(database, config, undefined, true, { resolveModel: createModelResolver(env) });
  try {
    const s = await createSession(host.db, { title: "bench retry", model: { provider: "openai-compatible", model: "bench" } });
    const id = asSessionId(s.id);
    const plain: number[] = [];
    const retried: { ms: number; delayMs: number }[] = [];
    for (let i = 0; i < 2 * samples; i++) {
      const retry = i % 2 === 1;
      if (retry) fake.enqueue({ status: 429, message: "rate limited", headers: { "retry-after-ms": String(RETRY_AFTER_MS) } });
      fake.enqueue({ text: ["ok"] });
      const before = await host.db.sessionEvent.count({ where: { sessionId: id, kind: "turn_end" } });
      await inTx(host.db, (tx) => enqueue(tx, id, { mode: "queue", text: `prompt ${i}`, source: { kind: "human" } }));
      await waitUntil(async () => (await host.db.sessionEvent.count({ where: { sessionId: id, kind: "turn_end" } })) > before, 30_000, `turn ${i}`);
      const events = await host.db.sessionEvent.findMany({
        where: { sessionId: id, kind: { in: ["step_start", "model_wait", "assistant_message"] } },
        orderBy: { seq: "desc" },
        take: 3,
        select: { kind: true, createdAt: true, payload: true },
      });
      const at = (kind: string) => events.find((e) => e.kind === kind);
      const ms = at("assistant_message")!.createdAt.getTime() - at("step_start")!.createdAt.getTime();
      if (!retry) plain.push(ms);
      else retried.push({ ms, delayMs: (at("model_wait")!.payload as { wait: { delayMs: number } }).wait.delayMs });
    }
    const base = percentile([...plain].sort((a, b) => a - b), 50);
    const overhead = retried.map((r) => r.ms - r.delayMs - base).sort((a, b) => a - b);
    return {
      samples,
      retryAfterMs: RETRY_AFTER_MS,
      requests: fake.requests.length,
      plainStepP50Ms: base,
      plainStepP95Ms: percentileOf(plain, 95),
      retriedStepP50Ms: percentileOf(retried.map((r) => r.ms), 50),
      retriedStepP95Ms: percentileOf(retried.map((r) => r.ms), 95),
      overheadP50Ms: percentile(overhead, 50),
      overheadP95Ms: percentile(overhead, 95),
    };
  } finally {
    await host.stop();
    await fake.close();
  }
}

// ------------------------------------------------------------------ main

async function main(): Promise<void> {
  const started = performance.now();
  await withBenchDatabase("at_bench", async (database) => {
    const url = directUrlOf(database);
    // The product's configuration (server/env.ts defaults), not the test harness's.
    const config = runtimeConfigFromEnv(parseEnv({}));

    const server = await serverInfo(url);

    progress(`pg commit rate, 1 connection, ${COMMIT_MS} ms`);
    const commit1 = await commitRate(url, 1, COMMIT_MS);
    progress(`pg commit rate, 8 connections, ${COMMIT_MS} ms`);
    const commit8 = await commitRate(url, 8, COMMIT_MS);

    progress("warm-up");
    await modelSteps(database, config, 2, 3);
    const steps = [];
    for (const agents of AGENT_COUNTS) {
      progress(`model steps: ${agents} agents x ${PROMPTS} prompts`);
      const r = await modelSteps(database, config, agents, PROMPTS);
      steps.push({
        ...r,
        stepsPerSec: round(r.stepsPerSec),
        ratioToCommitRate1Conn: round(r.stepsPerSec / commit1, 4),
        ratioToCommitRate8Conn: round(r.stepsPerSec / commit8, 4),
      });
    }

    progress(`steer latency: ${STEERS} samples`);
    const steer = await steerLatency(database, config, STEERS);

    progress(`budget stop: ${BUDGET_MEMBERS} members x ${BUDGET_TRIALS} trials`);
    const budget = await budgetStop(database, config, BUDGET_MEMBERS, BUDGET_TRIALS);

    progress(`retry overhead: ${RETRIES} retried steps`);
    const retry = await retryOverhead(database, config, RETRIES);

    const result = {
      bench: "runtime",
      at: new Date().toISOString(),
      machine: { cpus: os.cpus().length, node: process.version, ...server },
      setup: {
        runtimeConfig: { ...config, systemPrompt: undefined },
        dbPoolSize: DB_POOL,
        scriptedModelDelayMs: 0,
        processes: 1,
      },
      pgCommitRate: {
        durationMs: COMMIT_MS,
        singleRowInsertsPerSec1Conn: round(commit1),
        singleRowInsertsPerSec8Conn: round(commit8),
      },
      modelSteps: steps,
      steer: { scriptedModelDelayMs: 0, ...steer },
      budgetStop: { scriptedModelDelayMs: 0, ...budget },
      retryOverhead: retry,
      totalSeconds: round((performance.now() - started) / 1000, 1),
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  });
}

runBench(main);
