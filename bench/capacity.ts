// Capacity: how many streaming agents one app server carries, against a real Postgres, next to
// the raw commit rate of the same server measured in the same run. Figures only, no assertions.
//
//   npm run bench:capacity        (TEST_DATABASE_URL, default postgresql://postgres@127.0.0.1:5432/postgres)
//
// Prints ONE JSON object on stdout; progress goes to stderr. Knobs: BENCH_CAPACITY_NS (agent
// counts, multiples of 4, default "8,32,128,200,256"), BENCH_CAPACITY_SECONDS (measured window per
// N, default 20), BENCH_CAPACITY_WARMUP_SECONDS (the longest warm-up, default 60),
// BENCH_CAPACITY_CHUNK_MS (the keyless model's pause per chunk, default 25: 40 chunks/s),
// BENCH_COMMIT_MS (default 2000), BENCH_CAPACITY_CPU_PROF (a folder: the app server writes a V8
// CPU profile there per N).
//
// For each N, on a fresh database (withBenchDatabase): one app server process
// (capacity-server.ts: startAppServer without pages, the product's configuration, no step cap)
// drives N agents in N/4 teams — a Lead and three teammates added with team.addTeammate — all
// made over HTTP by one signed-up person, who also holds an SSE subscription (the tRPC client
// over HTTP with the session cookie, as the browser) on every team feed (`team.live`) and
// every session feed (`session.live`), opened as each exists. Teammates stand by until every
// agent has been set up, then each gets a prompt to go (session.prompt, 32 to an HTTP batch)
// and loops in one turn (capacity-shared.ts): each step streams 1,100–1,400 characters (~300
// tokens; the length differs by agent, so agents drift apart) as word chunks at
// BENCH_CAPACITY_CHUNK_MS each, then makes one tool call (a step without one would end the
// turn): every 4th a send_message to a teammate (offset by agent), the others read the board
// or roster. Warm-up lasts until every agent has finished a step of it (or the
// warm-up limit), then the window of BENCH_CAPACITY_SECONDS is measured:
//
// - commitsPerSec: the bench database's pg_stat_database.xact_commit delta over the window.
//   Postgres counts every transaction, read-only autocommit statements included (the feeds'
//   reads are part of the load); backends flush these counters at most about once a second.
//   rowsInsertedPerSec / rowsUpdatedPerSec from the same row's tup_inserted / tup_updated.
// - commitsPerStreamingAgentSec: commitsPerSec ÷ streaming agents (those that appended an
//   assistant_delta inside the window). An overloaded server streams slower than the pace, so
//   also streamedChunksPerAgentSec (the text chunks in assistant_delta events stamped inside
//   the window, per agent and second; the pace asks for 1000 / BENCH_CAPACITY_CHUNK_MS) and
//   commitsPerPacedAgentSec: commits ÷ the agent-seconds those chunks take at the pace.
// - stepsPerSec: assistant_message events stamped inside the window ÷ its length.
// - appCpu: process.cpuUsage() of the app server process; dbCpu: utime + stime from
//   /proc/<pid>/stat of the bench database's backends in pg_stat_activity at both ends of the
//   window (best effort: a backend that ended inside the window is lost, one that started
//   inside it counts whole; unavailable when /proc shows none of them, e.g. a remote
//   server); subscriberCpu: this process (the SSE clients). CPU in cores (CPU-seconds per
//   second) and CPU milliseconds per database commit.
// - stepOverheadMs (the "runtime time per step beyond the model's"): for each step
//   whose assistant_message is stamped inside the window, (assistant_message.created_at −
//   step_start.created_at) − the model call's own wall time, from the runtime's call of
//   stream() to the model's finish chunk, recorded in the app process (TimedModel). So it is
//   the runtime context render, history projection, flushing the last deltas and committing
//   the message; created_at is the app process's clock when it stamps the row, just before
//   the insert. stepCycleOverheadMs: step_start → next step_start minus the model's time (adds
//   the tool call, step_end and the next step's claim). modelPacingLagMs: the model call's
//   time minus its pacing (chunks × delay): how late the app's timers fired (event-loop lag).
// - eventToSubscriberMs (session feeds): for every event stamped inside the window, its arrival
//   at the subscriber (Date.now() in onData, this process) − its created_at (the app process's
//   clock, same host). Events not received within DRAIN_MS after the window count as
//   `undelivered` and as infinitely late in the percentiles (null when one lands there).
//   teamFeedMessageMs: a team message's created_at (the database's clock) → the first team
//   snapshot that shows it.
// - withinBounds: eventToSubscriber p95 < 150 ms and stepOverhead p99 < 50 ms; the largest
//   measured N within them is `largestNWithinBounds` (null: none).
//
// Every rate is also given as its ratio to the raw commit rate (single-row INSERT autocommits,
// 1 and 8 connections, measured first on the first N's database), every duration in units of
// one single-connection commit time (ms × rate1 / 1000). An N that cannot be driven (setup or
// the server fails, times out) is reported with its error and how far it got; the run goes on.
// Between Ns the subscriptions close, the server stops gracefully (open turns end interrupted)
// and the database is dropped.
import { execFileSync, fork, type ChildProcess } from "node:child_process";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import pg from "pg";
import { databaseEnv, type DatabaseUrls, directUrlOf } from "../server/db/client";
import { z } from "zod";
import { chunkText } from "../server/models/scripted";
import { httpClient } from "../server/testing/http-client";
import { signUpOverHttp } from "../server/testing/people";
import { ChildMessageSchema, goPrompt, LOOP_RESOLUTION_MS, loopDelayMs, REPLY, SEND_EVERY, standbyPrompt, WORKERS, type ChildMessage, type ModelCall, type ParentMessage } from "./capacity-shared";
import { commitRate, percentile, progress, round, runBench, serverInfo, sleep, startNodeOptions, withBenchDatabase } from "./support";

const Knobs = z.object({
  BENCH_CAPACITY_NS: z
    .string()
    .default("8,32,128,200,256")
    .transform((s) => s.split(",").map((n) => Number(n.trim())))
    .pipe(z.array(z.number().int().min(4).multipleOf(4, "agent counts are multiples of 4 (a Lead and 3 teammates a team)")).min(1)),
  BENCH_CAPACITY_SECONDS: z.coerce.number().positive().default(20),
  BENCH_CAPACITY_WARMUP_SECONDS: z.coerce.number().nonnegative().default(60),
  BENCH_CAPACITY_CHUNK_MS: z.coerce.number().int().nonnegative().default(25),
  BENCH_COMMIT_MS: z.coerce.number().int().positive().default(2000),
});
type Knobs = z.infer<typeof Knobs>;

const BOUNDS = { eventToSubscriberP95Ms: 150, stepOverheadP99Ms: 50 };
/** How long after the window events stamped inside it may still arrive. */
const DRAIN_MS = 5_000;
const SETUP_TIMEOUT_MS = 180_000;
const STOP_TIMEOUT_MS = 120_000;
/** Setup calls in flight at once; the go prompts fill one HTTP batch (32 calls). */
const SETUP_CONCURRENCY = 8;
const GO_CONCURRENCY = 32;
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

// ------------------------------------------------------------------ the app server process

class AppProcess {
  private nextId = 1;
  private readonly waiting = new Map<number, (m: ChildMessage) => void>();
  readonly logs: string[] = [];
  logCount = 0;

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static start(database: DatabaseUrls, chunkMs: number): Promise<AppProcess> {
    const child = fork(path.join(import.meta.dirname, "capacity-server.ts"), [], {
      // BENCH_CAPACITY_CPU_PROF=<dir>: a V8 CPU profile of the app server per N, for finding where its time goes.
      execArgv: [...startNodeOptions(), "--import", "tsx", ...(process.env.BENCH_CAPACITY_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CAPACITY_CPU_PROF}`] : [])],
      // The shell's own DIRECT_DATABASE_URL must not reach it (an undefined value is not passed).
      env: { ...process.env, DIRECT_DATABASE_URL: undefined, ...databaseEnv(database), BENCH_CAPACITY_CHUNK_MS: String(chunkMs) },
      // stdout stays ours (the JSON); the server's own output goes to stderr.
      stdio: ["ignore", "pipe", "inherit", "ipc"],
    });
    child.stdout!.pipe(process.stderr);
    let app: AppProcess | null = null;
    return new Promise((resolve, reject) => {
      child.on("message", (raw: unknown) => {
        const parsed = ChildMessageSchema.safeParse(raw);
        if (!parsed.success) return progress(`app: unreadable message ${JSON.stringify(raw).slice(0, 200)}`);
        const m = parsed.data;
        if (m.type === "ready") {
          app = new AppProcess(child, m.url.replace(/\/$/, ""));
          resolve(app);
        } else if (m.type === "failed") reject(new Error(`app server failed: ${m.error}`));
        else if (m.type === "log") app?.log(m.line);
        else if (app) app.answer(m);
      });
      child.once("exit", (code, signal) => {
        reject(new Error(`app server exited (${code ?? signal}) before it was ready`));
        app?.exited(`app server exited (${code ?? signal})`);
      });
    });
  }

  private log(line: string): void {
    this.logCount += 1;
    // The first lines say why; a flood of the same says nothing more.
    if (this.logs.length < 10) {
      this.logs.push(line.slice(0, 400));
      progress(`app: ${line.slice(0, 400)}`);
    }
  }

  /** Requests still waiting fail at once. */
  private exited(why: string): void {
    for (const answer of this.waiting.values()) answer({ type: "failed", error: why });
    this.waiting.clear();
  }

  private answer(m: ChildMessage): void {
    if (!("id" in m)) return;
    this.waiting.get(m.id)?.(m);
    this.waiting.delete(m.id);
  }

  request<T extends ChildMessage["type"]>(type: ParentMessage["type"], answer: T, timeoutMs = 30_000): Promise<Extract<ChildMessage, { type: T }>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`app server did not answer "${type}" within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(id, (m) => {
        clearTimeout(timer);
        if (m.type === answer) resolve(m as Extract<ChildMessage, { type: T }>);
        else reject(new Error(m.type === "failed" ? m.error : `app server answered "${type}" with "${m.type}"`));
      });
      this.child.send({ id, type } satisfies ParentMessage);
    });
  }

  /** Graceful stop (open turns end interrupted); killed when it takes longer than the limit. */
  async stop(): Promise<{ ms: number | null; killed: boolean }> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return { ms: null, killed: false };
    const exited = new Promise<void>((r) => this.child.once("exit", () => r()));
    try {
      const { ms } = await this.request("stop", "stopped", STOP_TIMEOUT_MS);
      await exited;
      return { ms: round(ms), killed: false };
    } catch {
      this.child.kill("SIGKILL");
      await exited;
      return { ms: null, killed: true };
    }
  }
}

// ------------------------------------------------------------------ subscribers

type Client = ReturnType<typeof httpClient>;
interface Arrival {
  key: string;
  createdAt: number;
  arrivedAt: number;
}

/** Every feed's subscription, and what arrived while recording. */
class Feeds {
  private readonly subs: { unsubscribe(): void }[] = [];
  private readonly seenMessages = new Set<string>();
  recording = false;
  readonly sessionArrivals: Arrival[] = [];
  readonly teamArrivals: Arrival[] = [];
  /** Feed messages (SSE data events) by arrival time, to count those inside the window. */
  readonly sessionMessageTimes: number[] = [];
  readonly teamSnapshotTimes: number[] = [];
  reconnects = 0;
  errors: string[] = [];

  constructor(readonly client: Client) {}

  private observer<T>(onData: (data: T, arrivedAt: number) => void) {
    let connected = false;
    return {
      onData: ({ data }: { data: T }) => onData(data, Date.now()),
      onError: (e: unknown) => {
        if (this.errors.length < 10) this.errors.push(e instanceof Error ? e.message : String(e));
      },
      onConnectionStateChange: (s: { state: string }) => {
        if (s.state === "pending") connected = true;
        else if (s.state === "connecting" && connected) this.reconnects += 1;
      },
    };
  }

  session(sessionId: string): void {
    const observer = this.observer<{ type: "events"; events: { createdAt: Date }[] } | { type: "state" }>((data, arrivedAt) => {
      if (!this.recording) return;
      this.sessionMessageTimes.push(arrivedAt);
      if (data.type !== "events") return;
      for (const e of data.events) this.sessionArrivals.push({ key: sessionId, createdAt: e.createdAt.getTime(), arrivedAt });
    });
    this.subs.push(this.client.session.live.subscribe({ sessionId, lastEventId: null }, observer));
  }

  team(teamId: string): void {
    // The feed sends the whole state, then patches: a patch's messages are the new or changed ones.
    const observer = this.observer<{ type: "state"; state: { messages: TeamMessageRow[] } } | { type: "patch"; patch: { messages?: { upsert: TeamMessageRow[] } } }>((data, arrivedAt) => {
      if (this.recording) this.teamSnapshotTimes.push(arrivedAt);
      const messages = data.type === "state" ? data.state.messages : (data.patch.messages?.upsert ?? []);
      for (const m of messages) {
        if (this.seenMessages.has(m.id)) continue;
        this.seenMessages.add(m.id);
        if (this.recording) this.teamArrivals.push({ key: teamId, createdAt: m.createdAt.getTime(), arrivedAt });
      }
    });
    this.subs.push(this.client.team.live.subscribe({ teamId, lastEventId: null }, observer));
  }

  close(): void {
    for (const s of this.subs) s.unsubscribe();
  }
}

type TeamMessageRow = { id: string; createdAt: Date };

// ------------------------------------------------------------------ samples

interface Sample {
  at: number;
  commits: number;
  inserted: number;
  updated: number;
  app: { user: number; system: number };
  appLoop: { p50Ms: number; p99Ms: number; maxMs: number };
  bench: NodeJS.CpuUsage;
  backends: Map<number, number> | string;
  /** Busy CPU ticks of the whole machine (/proc/stat), null when unreadable. */
  machine: number | null;
  load1m: number;
}

async function machineBusyTicks(): Promise<number | null> {
  try {
    // cpu  user nice system idle iowait irq softirq steal …
    const t = (await readFile("/proc/stat", "utf8")).split("\n")[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    return t.reduce((a, b) => a + b, 0) - t[3]! - t[4]!;
  } catch {
    return null;
  }
}

/** CPU ticks of each backend of the monitor's database (not the monitor's own), or why not. */
async function backendTicks(mon: pg.Client): Promise<Map<number, number> | string> {
  const { rows } = await mon.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
  const ticks = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      const stat = await readFile(`/proc/${pid}/stat`, "utf8");
      // Fields after "(comm)": state is field 3, utime 14, stime 15.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks.set(pid, Number(fields[11]) + Number(fields[12]));
    } catch {
      // Ended meanwhile, or not on this host.
    }
  }
  if (rows.length > 0 && ticks.size === 0) return "no backend of the bench database is visible in /proc (a server on another host or in a container?)";
  return ticks;
}

async function takeSample(mon: pg.Client, app: AppProcess): Promise<Sample> {
  const [stats, appSample, backends, machine] = await Promise.all([
    mon.query<{ commits: string; inserted: string; updated: string }>(
      "SELECT xact_commit AS commits, tup_inserted AS inserted, tup_updated AS updated FROM pg_stat_database WHERE datname = current_database()",
    ),
    app.request("sample", "sample"),
    backendTicks(mon),
    machineBusyTicks(),
  ]);
  const row = stats.rows[0]!;
  return {
    at: Date.now(),
    commits: Number(row.commits),
    inserted: Number(row.inserted),
    updated: Number(row.updated),
    app: appSample.cpu,
    appLoop: appSample.loop,
    bench: process.cpuUsage(),
    backends,
    machine,
    load1m: round(os.loadavg()[0]!, 2),
  };
}

function dbCpu(before: Sample, after: Sample, seconds: number, commits: number) {
  if (typeof before.backends === "string") return { available: false as const, reason: before.backends };
  if (typeof after.backends === "string") return { available: false as const, reason: after.backends };
  let ticks = 0;
  let ended = 0;
  for (const [pid, t] of after.backends) ticks += t - (before.backends.get(pid) ?? 0);
  for (const pid of before.backends.keys()) if (!after.backends.has(pid)) ended += 1;
  return { available: true as const, ...cpuFigures((ticks / CLOCK_TICKS) * 1000, seconds, commits), backends: after.backends.size, backendsEndedInWindow: ended };
}

/** The whole machine's busy CPU over the window, and the part none of the bench's processes used (others' load). */
function machineCpu(before: Sample, after: Sample, seconds: number, oursMs: number) {
  const load1m = { atStart: before.load1m, atEnd: after.load1m };
  if (before.machine === null || after.machine === null) return { available: false, load1m };
  const busyMs = ((after.machine - before.machine) / CLOCK_TICKS) * 1000;
  return { available: true, busyCores: round(busyMs / 1000 / seconds, 3), othersCores: round(Math.max(0, busyMs - oursMs) / 1000 / seconds, 3), load1m };
}

function cpuFigures(cpuMs: number, seconds: number, commits: number) {
  const cores = cpuMs / 1000 / seconds;
  return { cores: round(cores, 3), percentOfMachine: round((100 * cores) / os.cpus().length), msPerCommit: commits > 0 ? round(cpuMs / commits, 3) : null };
}

// ------------------------------------------------------------------ one N

interface Rates {
  commit1: number;
  commit8: number;
}

const rate = (perSec: number, r: Rates) => ({ perSec: round(perSec, 2), ratioTo1Conn: round(perSec / r.commit1, 4), ratioTo8Conn: round(perSec / r.commit8, 4) });

type Durations = { samples: number; max: number | null; inSingleConnCommitTimes: Record<string, number | null> } & {
  [p: `p${number}`]: number | null;
};

/** Percentiles of `values` with `missing` more counted as infinitely late; each also in commit times. */
function durations(values: number[], r: Rates, ps: number[], missing = 0): Durations {
  const sorted = [...values, ...Array<number>(missing).fill(Infinity)].sort((a, b) => a - b);
  const finite = sorted.filter(Number.isFinite);
  const at = (p: number) => percentile(sorted, p);
  const out = { samples: values.length } as Durations;
  for (const p of ps) out[`p${p}`] = Number.isFinite(at(p)) ? round(at(p)) : null;
  out.max = finite.length > 0 ? round(finite.at(-1)!) : null;
  out.inSingleConnCommitTimes = Object.fromEntries(ps.map((p) => [`p${p}`, Number.isFinite(at(p)) ? round((at(p) * r.commit1) / 1000, 2) : null]));
  return out;
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

function deadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} took over ${ms / 1000} s`)), ms)));
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

async function countByKey(mon: pg.Client, sql: string, from: number, to: number): Promise<Map<string, number>> {
  const { rows } = await mon.query<{ key: string; n: number }>(sql, [new Date(from), new Date(to)]);
  return new Map(rows.map((r) => [r.key, r.n]));
}

/**
 * N/4 teams over HTTP, a feed on each team and session as soon as it exists; teammates stand
 * by (capacity-shared.ts) until every agent is told to go.
 */
async function setUpTeams(feeds: Feeds, n: number, reached: { teams: number; agents: number; subscriptions: number }) {
  const { client } = feeds;
  /** Agent index → session id; index i belongs to team ⌊i/4⌋, the Lead first. */
  const sessions: string[] = [];
  const teams = await mapLimit(
    Array.from({ length: n / 4 }, (_, t) => t),
    SETUP_CONCURRENCY,
    async (t) => {
      const lead = await client.session.create.mutate({ title: `capacity team ${t}` });
      sessions[4 * t] = lead.id;
      feeds.team(lead.id);
      feeds.session(lead.id);
      reached.teams += 1;
      reached.subscriptions += 2;
      return { teamId: lead.id, t };
    },
  );
  await mapLimit(
    teams.flatMap(({ teamId, t }) => WORKERS.map((name, k) => ({ teamId, name, index: 4 * t + k + 1 }))),
    SETUP_CONCURRENCY,
    async ({ teamId, name, index }) => {
      const m = await client.team.addTeammate.mutate({ teamId, name, description: "capacity bench worker", prompt: standbyPrompt(index) });
      sessions[index] = m.sessionId;
      feeds.session(m.sessionId);
      reached.subscriptions += 1;
    },
  );
  // One HTTP batch carries up to 32 calls: the agents start within a moment of each other.
  await mapLimit(
    sessions.map((sessionId, index) => ({ sessionId, index })),
    GO_CONCURRENCY,
    async ({ sessionId, index }) => {
      await client.session.prompt.mutate({ sessionId, text: goPrompt(index) });
      reached.agents += 1;
    },
  );
  return sessions;
}

/** Until every agent has finished a step of its endless turn (each calls a tool), or the limit. */
async function warmUp(mon: pg.Client, n: number, maxSeconds: number) {
  const t0 = performance.now();
  let stepped = 0;
  while (performance.now() - t0 < maxSeconds * 1000) {
    const { rows } = await mon.query<{ n: number }>("SELECT count(DISTINCT session_id)::int AS n FROM session_events WHERE kind = 'tool_result'");
    stepped = rows[0]!.n;
    if (stepped >= n) break;
    await sleep(500);
  }
  return { seconds: round((performance.now() - t0) / 1000, 1), agentsWithAFinishedStep: stepped, complete: stepped >= n };
}

/**
 * Waits up to DRAIN_MS for every session event and team message stamped inside [t0, t1] to
 * reach its feed; returns how many did not.
 */
async function drain(mon: pg.Client, feeds: Feeds, t0: number, t1: number) {
  const sessionSql = "SELECT session_id AS key, count(*)::int AS n FROM session_events WHERE created_at >= $1 AND created_at <= $2 GROUP BY session_id";
  const teamSql = "SELECT team_id AS key, count(*)::int AS n FROM team_messages WHERE created_at >= $1 AND created_at <= $2 GROUP BY team_id";
  const missing = (expected: Map<string, number>, arrivals: Arrival[]) => {
    const got = new Map<string, number>();
    for (const a of arrivals) if (a.createdAt >= t0 && a.createdAt <= t1) got.set(a.key, (got.get(a.key) ?? 0) + 1);
    let short = 0;
    for (const [key, count] of expected) short += Math.max(0, count - (got.get(key) ?? 0));
    return short;
  };
  const start = Date.now();
  for (;;) {
    const events = missing(await countByKey(mon, sessionSql, t0, t1), feeds.sessionArrivals);
    const messages = missing(await countByKey(mon, teamSql, t0, t1), feeds.teamArrivals);
    if ((events === 0 && messages === 0) || Date.now() - start >= DRAIN_MS) return { events, messages };
    await sleep(250);
  }
}

/**
 * Steps whose assistant_message is stamped inside [t0, t1]: step_start → assistant_message of
 * the same (turn, step), the model call that ran between them, and the next step's start.
 */
async function stepTimes(mon: pg.Client, calls: ModelCall[], sessions: string[], t0: number, t1: number) {
  const byAgent = new Map<string, ModelCall[]>();
  for (const c of calls) {
    const s = sessions[c.agent];
    if (s) byAgent.set(s, [...(byAgent.get(s) ?? []), c]);
  }
  const { rows } = await mon.query<{ session: string; kind: string; turn: string; step: number; at: Date }>(
    `SELECT session_id AS session, kind, payload->>'turnId' AS turn, (payload->>'step')::int AS step, created_at AS at
       FROM session_events WHERE kind IN ('step_start', 'assistant_message') ORDER BY session_id, seq`,
  );
  const steps = new Map<string, { session: string; turn: string; step: number; start?: number; message?: number }>();
  for (const row of rows) {
    const key = `${row.session}/${row.turn}/${row.step}`;
    const s = steps.get(key) ?? { session: row.session, turn: row.turn, step: row.step };
    if (row.kind === "step_start") s.start = row.at.getTime();
    else s.message = row.at.getTime();
    steps.set(key, s);
  }
  const out = { inWindow: 0, unmatched: 0, overhead: [] as number[], beforeModel: [] as number[], afterModel: [] as number[], cycle: [] as number[], lag: [] as number[] };
  for (const s of steps.values()) {
    if (s.start === undefined || s.message === undefined || s.message < t0 || s.message > t1) continue;
    out.inWindow += 1;
    const call = (byAgent.get(s.session) ?? []).findLast((c) => c.startedAt >= s.start! && c.finishedAt <= s.message!);
    if (!call) {
      out.unmatched += 1;
      continue;
    }
    const modelMs = call.finishedAt - call.startedAt;
    out.overhead.push(s.message - s.start - modelMs);
    out.beforeModel.push(call.startedAt - s.start);
    out.afterModel.push(s.message - call.finishedAt);
    out.lag.push(modelMs - call.nominalMs);
    const next = steps.get(`${s.session}/${s.turn}/${s.step + 1}`)?.start;
    if (next !== undefined && next <= t1) out.cycle.push(next - s.start - modelMs);
  }
  return out;
}

const cpuMsBetween = (u: { user: number; system: number }, v: { user: number; system: number }) => (v.user - u.user + v.system - u.system) / 1000;

/** What one N holds, for the clean-up and for the report of an N that failed. */
interface Run {
  reached: { teams: number; agents: number; subscriptions: number };
  mon: pg.Client;
  app: AppProcess | null;
  feeds: Feeds | null;
}

/** One N: the figures, or the error and how far it got; the server stopped and the feeds closed either way. */
async function measureN(database: DatabaseUrls, n: number, knobs: Knobs, r: Rates) {
  const run: Run = { reached: { teams: 0, agents: 0, subscriptions: 0 }, mon: new pg.Client({ connectionString: directUrlOf(database) }), app: null, feeds: null };
  run.mon.on("error", () => undefined);
  const result = await measureRun(run, database, n, knobs, r).catch((e: unknown) => {
    const error = e instanceof Error ? e.message : String(e);
    progress(`N=${n}: ${error}`);
    return { agents: n, error, reached: run.reached, appLogLines: run.app?.logCount ?? 0, appLogFirst: run.app?.logs ?? [], feedErrors: run.feeds?.errors ?? [] };
  });
  run.feeds?.close();
  let stop: Awaited<ReturnType<AppProcess["stop"]>> | null = null;
  if (run.app) {
    progress(`N=${n}: stopping the app server`);
    stop = await run.app.stop();
    progress(`N=${n}: stopped in ${stop.ms ?? "?"} ms${stop.killed ? " (killed)" : ""}`);
  }
  await run.mon.end().catch(() => undefined);
  return { ...result, stop };
}

async function measureRun(run: Run, database: DatabaseUrls, n: number, knobs: Knobs, r: Rates) {
  const { reached, mon } = run;
  await mon.connect();
  const app = (run.app = await AppProcess.start(database, knobs.BENCH_CAPACITY_CHUNK_MS));
  const owner = await signUpOverHttp(app.url, { name: "Capacity Owner" });
  const feeds = (run.feeds = new Feeds(httpClient(app.url, { cookie: owner.cookie })));

  const tSetup = performance.now();
  const sessions = await deadline(setUpTeams(feeds, n, reached), SETUP_TIMEOUT_MS, "setup");
  const setupSeconds = round((performance.now() - tSetup) / 1000, 1);
  progress(`N=${n}: ${n / 4} teams, ${n} agents and ${reached.subscriptions} feeds set up in ${setupSeconds} s; warming up`);
  const warmup = await warmUp(mon, n, knobs.BENCH_CAPACITY_WARMUP_SECONDS);
  progress(`N=${n}: warm-up ${warmup.seconds} s (${warmup.agentsWithAFinishedStep}/${n} agents finished a step); measuring ${knobs.BENCH_CAPACITY_SECONDS} s`);

  // ---- the window
  const benchLoop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  await app.request("calls", "calls"); // forget the warm-up's calls
  feeds.recording = true;
  const before = await takeSample(mon, app);
  benchLoop.enable();
  await sleep(knobs.BENCH_CAPACITY_SECONDS * 1000);
  const after = await takeSample(mon, app);
  benchLoop.disable();
  const [t0, t1] = [before.at, after.at];
  const seconds = (t1 - t0) / 1000;
  const commits = after.commits - before.commits;

  const undelivered = await drain(mon, feeds, t0, t1);
  feeds.recording = false;
  const steps = await stepTimes(mon, (await app.request("calls", "calls")).calls, sessions, t0, t1);
  const { rows: streamingRows } = await mon.query<{ n: number }>(
    "SELECT count(DISTINCT session_id)::int AS n FROM session_events WHERE kind = 'assistant_delta' AND created_at >= $1 AND created_at <= $2",
    [new Date(t0), new Date(t1)],
  );
  const streaming = streamingRows[0]!.n;
  // The text chunks that reached the log inside the window (deltas are whole chunks run together).
  const { rows: deltaRows } = await mon.query<{ text: string }>(
    "SELECT payload->>'text' AS text FROM session_events WHERE kind = 'assistant_delta' AND created_at >= $1 AND created_at <= $2",
    [new Date(t0), new Date(t1)],
  );
  const chunks = deltaRows.reduce((sum, row) => sum + chunkText(row.text).length, 0);
  const { rows: endRows } = await mon.query<{ reason: string; n: number }>(
    "SELECT payload->>'reason' AS reason, count(*)::int AS n FROM session_events WHERE kind = 'turn_end' AND created_at >= $1 AND created_at <= $2 GROUP BY 1",
    [new Date(t0), new Date(t1)],
  );

  const inWindow = (a: Arrival) => a.createdAt >= t0 && a.createdAt <= t1;
  const countIn = (times: number[]) => times.filter((t) => t >= t0 && t <= t1).length;
  const stepOverhead = durations(steps.overhead, r, [50, 99]);
  const eventLatency = durations(feeds.sessionArrivals.filter(inWindow).map((a) => a.arrivedAt - a.createdAt), r, [50, 95, 99], undelivered.events);
  const teamLatency = durations(feeds.teamArrivals.filter(inWindow).map((a) => a.arrivedAt - a.createdAt), r, [50, 95], undelivered.messages);
  /** Agent-seconds of streaming at the intended pace that the chunks streamed amount to. */
  const pacedAgentSeconds = knobs.BENCH_CAPACITY_CHUNK_MS > 0 ? (chunks * knobs.BENCH_CAPACITY_CHUNK_MS) / 1000 : 0;
  const appMs = cpuMsBetween(before.app, after.app);
  const benchMs = cpuMsBetween(before.bench, after.bench);
  const db = dbCpu(before, after, seconds, commits);
  const outOfBounds: string[] = [];
  if (eventLatency.p95 == null || eventLatency.p95 >= BOUNDS.eventToSubscriberP95Ms) outOfBounds.push(`event-to-subscriber p95 ${eventLatency.p95 ?? "undelivered"} ms`);
  if (stepOverhead.p99 == null || stepOverhead.p99 >= BOUNDS.stepOverheadP99Ms) outOfBounds.push(`step overhead p99 ${stepOverhead.p99 ?? "none"} ms`);
  if (streaming < n) outOfBounds.push(`only ${streaming} of ${n} agents streamed`);

  return {
    agents: n,
    teams: n / 4,
    setupSeconds,
    warmup,
    seconds: round(seconds, 2),
    streamingAgents: streaming,
    commits,
    commitsPerSec: rate(commits / seconds, r),
    commitsPerStreamingAgentSec: streaming > 0 ? rate(commits / seconds / streaming, r) : null,
    streamedChunksPerAgentSec: round(chunks / n / seconds, 2),
    commitsPerPacedAgentSec: pacedAgentSeconds > 0 ? rate(commits / pacedAgentSeconds, r) : null,
    stepsPerSec: rate(steps.inWindow / seconds, r),
    rowsInsertedPerSec: rate((after.inserted - before.inserted) / seconds, r),
    rowsUpdatedPerSec: rate((after.updated - before.updated) / seconds, r),
    appCpu: { ...cpuFigures(appMs, seconds, commits), eventLoopDelayMs: after.appLoop },
    dbCpu: db,
    machineCpu: machineCpu(before, after, seconds, appMs + benchMs + (db.available ? db.cores * seconds * 1000 : 0)),
    subscriberCpu: {
      ...cpuFigures(cpuMsBetween(before.bench, after.bench), seconds, commits),
      eventLoopDelayMs: loopDelayMs(benchLoop),
    },
    stepOverheadMs: { ...stepOverhead, stepsInWindow: steps.inWindow, unmatchedSteps: steps.unmatched },
    stepOverheadPartsMs: { beforeModelCall: durations(steps.beforeModel, r, [50, 99]), afterModelFinish: durations(steps.afterModel, r, [50, 99]) },
    stepCycleOverheadMs: durations(steps.cycle, r, [50, 99]),
    modelPacingLagMs: durations(steps.lag, r, [50, 99]),
    eventToSubscriberMs: { ...eventLatency, undelivered: undelivered.events },
    teamFeedMessageMs: { ...teamLatency, undelivered: undelivered.messages },
    feedMessagesPerSec: { session: rate(countIn(feeds.sessionMessageTimes) / seconds, r), teamSnapshots: rate(countIn(feeds.teamSnapshotTimes) / seconds, r) },
    feedReconnects: feeds.reconnects,
    feedErrors: feeds.errors,
    /** Turns that ended inside the window, by reason (the endless turns should not). */
    turnEndsInWindow: Object.fromEntries(endRows.map((row) => [row.reason, row.n])),
    appLogLines: app.logCount,
    appLogFirst: app.logs,
    withinBounds: outOfBounds.length === 0,
    outOfBounds,
  };
}

// ------------------------------------------------------------------ main

async function main(): Promise<void> {
  const started = performance.now();
  const knobs = Knobs.parse(process.env);
  let rates: Rates | null = null;
  let server: Awaited<ReturnType<typeof serverInfo>> = {};
  const runs: Awaited<ReturnType<typeof measureN>>[] = [];
  for (const n of knobs.BENCH_CAPACITY_NS) {
    await withBenchDatabase("at_bench_cap", async (database) => {
      const url = directUrlOf(database);
      if (!rates) {
        server = await serverInfo(url);
        progress(`pg commit rate, 1 and 8 connections, ${knobs.BENCH_COMMIT_MS} ms each`);
        rates = { commit1: await commitRate(url, 1, knobs.BENCH_COMMIT_MS), commit8: await commitRate(url, 8, knobs.BENCH_COMMIT_MS) };
      }
      progress(`N=${n}: starting the app server`);
      runs.push(await measureN(database, n, knobs, rates));
    });
  }
  const within = runs.filter((run) => "withinBounds" in run && run.withinBounds).map((run) => run.agents);
  const result = {
    bench: "capacity",
    at: new Date().toISOString(),
    machine: { cpus: os.cpus().length, loadAverage1m: round(os.loadavg()[0]!, 2), node: process.version, ...server },
    setup: {
      processes: "one app server process (startAppServer, no pages, product configuration, no step cap); subscribers and this driver in another",
      appNodeOptions: startNodeOptions(),
      agentsPerTeam: 4,
      scriptedModelDelayMs: knobs.BENCH_CAPACITY_CHUNK_MS,
      chunksPerSec: knobs.BENCH_CAPACITY_CHUNK_MS > 0 ? round(1000 / knobs.BENCH_CAPACITY_CHUNK_MS) : null,
      reply: REPLY,
      toolCalls: `one per step (a step without one ends the turn); every ${SEND_EVERY}th a send_message to the next member`,
      subscriptions: "team.live per team and session.live per agent, over SSE with a session cookie",
      measureSeconds: knobs.BENCH_CAPACITY_SECONDS,
      warmupMaxSeconds: knobs.BENCH_CAPACITY_WARMUP_SECONDS,
      drainMs: DRAIN_MS,
      bounds: BOUNDS,
    },
    pgCommitRate: rates && {
      durationMs: knobs.BENCH_COMMIT_MS,
      singleRowInsertsPerSec1Conn: round((rates as Rates).commit1),
      singleRowInsertsPerSec8Conn: round((rates as Rates).commit8),
    },
    runs,
    largestNWithinBounds: within.length > 0 ? Math.max(...within) : null,
    totalSeconds: round((performance.now() - started) / 1000, 1),
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

runBench(main);
