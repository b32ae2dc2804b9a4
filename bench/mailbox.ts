// Team mailbox throughput and delivery latency against a real Postgres, next to the raw commit
// rate of the same server measured in the same run. Figures only, no assertions.
//
//   npm run bench:mailbox          (TEST_DATABASE_URL, default postgresql://postgres@127.0.0.1:5432/postgres)
//
// Creates its own database (migrated with the project's runner), drops it at the end, and
// prints ONE JSON object on stdout; progress goes to stderr. Knobs: BENCH_MESSAGES (messages
// per scenario, default 2000), BENCH_COMMIT_MS (default 2000), BENCH_CAS_MS (default 2000).
//
// - pgCommitRate: single-row INSERT autocommits with plain `pg`, 1 connection.
// - endToEnd: 1 and 8 concurrent senders (teammates) send BENCH_MESSAGES messages in total to
//   one teammate through sendMessage (queued row committed, then delivered into the inbox). One
//   Runtime (the product's config and DB pool, scripted model at zero delay, consumedStatement as its
//   onClaimed hook) drives the target, so every message goes send → delivered → consumed. The
//   senders have their own pool (as tool calls of other agents or another process would), its
//   connections opened before the clock starts (warmPool), as a running server's are.
//   maxPending is raised to the message count so the mailbox limit does not throttle the run.
//   messagesPerSec = messages / (last consumedAt − first send call start); delivery latency is
//   deliveredAt − the send call's start, consumption latency consumedAt − the same start (the
//   database's clock against this process's clock, same host). Each rate is also given as a
//   ratio to the commit rate.
// - fanOut: 8 senders to 8 targets (sender i sends its k-th message to target (i + k) mod 8),
//   BENCH_MESSAGES in total, one Runtime driving the 8 targets as above. deliveredPerSec =
//   messages / (last `accepted` answer − first send call start): a send call answers `accepted`
//   only once the message is in the target's inbox (its own delivery or a concurrent one), so
//   delivery latency is that answer − the call's start, in this process's clock (an upper bound
//   of the delivery commit). consumedPerSec and consumption latency use consumedAt as above.
// - pgBoss: pg-boss (dev dependency of this benchmark only, its own schema in the same database)
//   on the same server in the same run: 8 producers send BENCH_MESSAGES jobs in total to 8
//   queues (producer i's k-th job to queue (i + k) mod 8, as fanOut), 8 workers (one per queue)
//   fetch (up to BENCH_PGBOSS_BATCH jobs, default 8) and complete them in one call, polling again
//   after BENCH_PGBOSS_IDLE_MS (default 2) when a queue is empty. Producers and workers have a
//   pool of DB_POOL connections each, as our senders and runtime. jobsPerSec = jobs / (last
//   completion − first send start); latency = completion − the job's send start.
//   ratios: fanOut's deliveredPerSec ÷ pg-boss's jobsPerSec, and each ÷ the commit rate.
//   fanOutWithoutConsumer: the same sends with no Runtime running (nothing consumes): what the
//   mailbox alone costs.
//   appCpuCores(WhileSending): this process's CPU (senders, and for fanOut the Runtime) over the
//   sending phase, in cores (1 = one core busy all along).
// - taskCas: updateTask (server/team/task-board/) compare-and-set edits of one task by the
//   Lead: one updater in a loop, and 8 updaters contending for the same task (each re-reads the
//   revision and retries after TEAM_TASK_STALE_REVISION), BENCH_CAS_MS each.
import os from "node:os";
import PgBoss from "pg-boss";
import { createDb, type DatabaseUrls, type Db, directUrlOf } from "../server/db/client";
import { z } from "zod";
import { commitRate, percentile, progress, round, runBench, serverInfo, sleep, waitUntil, warmPool, withBenchDatabase } from "./support";
import { parseEnv } from "../server/env";
import { isAppError } from "../server/errors";
import { asSessionId, newSessionId, type SessionId } from "../server/ids";
import { ActivityHub } from "../server/live/activity";
import { ModelChoiceSchema } from "../server/models/choice";
import { ScriptedModel } from "../server/models/scripted";
import { runtimeConfigFromEnv, type RuntimeConfig } from "../server/runtime/config";
import { Runtime } from "../server/runtime/runtime";
import { createSession } from "../server/runtime/sessions";
import { consumedStatement, sendMessage, type SendStatus } from "../server/team/mailbox";
import { leadOf, type MemberRef } from "../server/members/membership";
import { createTask, getTask, updateTask } from "../server/team/task-board";

/** Of 400 messages (the earlier default) the p99 was the 4th slowest: more start-up noise than delivery. */
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 2000);
const COMMIT_MS = Number(process.env.BENCH_COMMIT_MS ?? 2000);
const CAS_MS = Number(process.env.BENCH_CAS_MS ?? 2000);
const SENDER_COUNTS = [1, 8];
const FAN_OUT = 8;
const PGBOSS_BATCH = Number(process.env.BENCH_PGBOSS_BATCH ?? 8);
const PGBOSS_IDLE_MS = Number(process.env.BENCH_PGBOSS_IDLE_MS ?? 2);
/** createDb's default (the app server's is DATABASE_POOL_SIZE, 20): kept, so figures compare across runs. */
const DB_POOL = 10;


// ------------------------------------------------------------------ raw Postgres commit rate

// ------------------------------------------------------------------ a team

interface Team {
  teamId: SessionId;
  senders: MemberRef[];
  target: MemberRef;
}

async function newTeam(db: Db, senders: number, label: string, targets = 1): Promise<Team & { targets: MemberRef[] }> {
  const lead = await createSession(db, {
    title: `bench ${label} lead`,
    model: ModelChoiceSchema.parse({ provider: "scripted", model: "keyless" }),
  });
  const teamId = asSessionId(lead.id);
  const member = async (name: string): Promise<MemberRef> => {
    const id = newSessionId();
    await db.session.create({
      data: { id, title: `bench ${label} ${name}`, model: { provider: "scripted", model: "keyless" }, teamId, memberName: name },
    });
    await db.teamMember.create({ data: { teamId, name, sessionId: id, description: name, context: "fresh", phase: "active" } });
    return { sessionId: id, name };
  };
  const list: MemberRef[] = [];
  for (let i = 0; i < senders; i++) list.push(await member(`sender-${i}`));
  const targetList: MemberRef[] = [];
  for (let i = 0; i < targets; i++) targetList.push(await member(targets === 1 ? "target" : `target-${i}`));
  return { teamId, senders: list, target: targetList[0]!, targets: targetList };
}

// ------------------------------------------------------------------ the consuming side

/**
 * The product's DB pool and a Runtime (not started) that drives the targets with the keyless
 * model at zero delay and records consumption, as a team's agents do.
 */
async function consumerHost(database: DatabaseUrls, config: RuntimeConfig) {
  const db = createDb(database, DB_POOL);
  const hub = new ActivityHub(database);
  await hub.start();
  const model = new ScriptedModel({ delayMs: 0 });
  const logs: string[] = [];
  const runtime = new Runtime({
    db,
    hub,
    config: { ...config, maxStepsPerTurn: 1_000_000 },
    resolveModel: () => model,
    onClaimed: consumedStatement,
    log: (l) => {
      logs.push(l);
      progress(`runtime: ${l}`);
    },
  });
  // The senders' own pool, warm, so the first sends do not pay for connecting.
  const senderDb = createDb(database, DB_POOL);
  await warmPool(senderDb, DB_POOL);
  async function close() {
    await runtime.stop();
    await hub.close();
    await senderDb.$disconnect();
    await db.$disconnect();
  }
  return { db, runtime, logs, senderDb, close };
}

// ------------------------------------------------------------------ end to end

async function endToEnd(database: DatabaseUrls, config: RuntimeConfig, senders: number, messages: number) {
  const { db, runtime, logs, senderDb, close } = await consumerHost(database, config);
  await runtime.start();
  try {
    const team = await newTeam(db, senders, `${senders}x`);
    const perSender = Math.ceil(messages / senders);
    const started = new Map<string, number>();
    const statuses: Record<SendStatus, number> = { accepted: 0, queued: 0 };
    const t0 = Date.now();
    await Promise.all(
      team.senders.map(async (sender) => {
        for (let k = 0; k < perSender; k++) {
          const at = Date.now();
          const r = await sendMessage(
            senderDb,
            { teamId: team.teamId, sender, target: team.target, content: `${sender.name} update ${k}: the parser handles nested lists now` },
            { maxPending: senders * perSender },
          );
          started.set(r.messageId, at);
          statuses[r.status] += 1;
        }
      }),
    );
    const sendSeconds = (Date.now() - t0) / 1000;
    const total = senders * perSender;
    await waitUntil(
      async () => (await db.teamMessage.count({ where: { targetSessionId: team.target.sessionId, consumedAt: { not: null } } })) >= total,
      120_000,
      "consumption",
    );
    const rows = await db.teamMessage.findMany({
      where: { targetSessionId: team.target.sessionId },
      select: { id: true, deliveredAt: true, consumedAt: true },
    });
    const delivered: number[] = [];
    const consumed: number[] = [];
    let lastConsumed = 0;
    for (const r of rows) {
      const at = started.get(r.id)!;
      delivered.push(r.deliveredAt!.getTime() - at);
      consumed.push(r.consumedAt!.getTime() - at);
      lastConsumed = Math.max(lastConsumed, r.consumedAt!.getTime());
    }
    delivered.sort((a, b) => a - b);
    consumed.sort((a, b) => a - b);
    const steps = await db.sessionEvent.count({ where: { sessionId: team.target.sessionId, kind: "step_start" } });
    const seconds = Math.max(1, lastConsumed - t0) / 1000;
    return {
      senders,
      messages: total,
      accepted: statuses.accepted,
      queued: statuses.queued,
      seconds: round(seconds, 3),
      messagesPerSec: total / seconds,
      sendCallsPerSec: round(total / sendSeconds),
      targetSteps: steps,
      deliveryLatencyMs: { p50: percentile(delivered, 50), p99: percentile(delivered, 99), max: delivered.at(-1) ?? NaN },
      consumeLatencyMs: { p50: percentile(consumed, 50), p99: percentile(consumed, 99), max: consumed.at(-1) ?? NaN },
      runtimeLogLines: logs.length,
    };
  } finally {
    await close();
  }
}

const latencies = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN };
};

/** This process's CPU since `since` (process.cpuUsage) in cores: 1 is one core busy all along. */
const cpuCores = (since: NodeJS.CpuUsage, t0: number) => {
  const used = process.cpuUsage(since);
  return round((used.user + used.system) / 1000 / Math.max(1, Date.now() - t0), 2);
};

// ------------------------------------------------------------------ 8 senders to 8 targets

async function fanOut(database: DatabaseUrls, config: RuntimeConfig, messages: number, consume = true) {
  const { db, runtime, logs, senderDb, close } = await consumerHost(database, config);
  if (consume) await runtime.start();
  try {
    const team = await newTeam(db, FAN_OUT, `fan-out`, FAN_OUT);
    const perSender = Math.ceil(messages / FAN_OUT);
    const started = new Map<string, number>();
    const deliveredMs: number[] = [];
    const statuses: Record<SendStatus, number> = { accepted: 0, queued: 0 };
    let lastAccepted = 0;
    const cpu0 = process.cpuUsage();
    const t0 = Date.now();
    await Promise.all(
      team.senders.map(async (sender, i) => {
        for (let k = 0; k < perSender; k++) {
          const target = team.targets[(i + k) % FAN_OUT]!;
          const at = Date.now();
          const r = await sendMessage(
            senderDb,
            { teamId: team.teamId, sender, target, content: `${sender.name} update ${k}: the parser handles nested lists now` },
            { maxPending: messages },
          );
          const now = Date.now();
          started.set(r.messageId, at);
          statuses[r.status] += 1;
          if (r.status === "accepted") {
            deliveredMs.push(now - at);
            lastAccepted = Math.max(lastAccepted, now);
          }
        }
      }),
    );
    const sendCpu = cpuCores(cpu0, t0);
    const total = FAN_OUT * perSender;
    const targetIds = team.targets.map((t) => t.sessionId);
    const delivered = {
      senders: FAN_OUT,
      targets: FAN_OUT,
      messages: total,
      accepted: statuses.accepted,
      queued: statuses.queued,
      deliveredPerSec: statuses.accepted / (Math.max(1, lastAccepted - t0) / 1000),
      deliveryLatencyMs: latencies(deliveredMs),
      appCpuCoresWhileSending: sendCpu,
    };
    if (!consume) return { ...delivered, consumedPerSec: NaN, consumeLatencyMs: null, runtimeLogLines: 0 };
    await waitUntil(
      async () => (await db.teamMessage.count({ where: { targetSessionId: { in: targetIds }, consumedAt: { not: null } } })) >= total,
      120_000,
      "consumption",
    );
    const rows = await db.teamMessage.findMany({ where: { targetSessionId: { in: targetIds } }, select: { id: true, consumedAt: true } });
    const consumedMs: number[] = [];
    let lastConsumed = 0;
    for (const r of rows) {
      consumedMs.push(r.consumedAt!.getTime() - started.get(r.id)!);
      lastConsumed = Math.max(lastConsumed, r.consumedAt!.getTime());
    }
    return {
      ...delivered,
      consumedPerSec: total / (Math.max(1, lastConsumed - t0) / 1000),
      consumeLatencyMs: latencies(consumedMs),
      runtimeLogLines: logs.length,
    };
  } finally {
    await close();
  }
}

// ------------------------------------------------------------------ pg-boss beside it

const JobData = z.object({ at: z.number() });

async function pgBoss(url: string, jobs: number) {
  const options = { connectionString: url, max: DB_POOL, schedule: false, supervise: false };
  const producers = new PgBoss(options);
  const workers = new PgBoss({ ...options, migrate: false });
  const errors: string[] = [];
  for (const boss of [producers, workers]) boss.on("error", (e: Error) => errors.push(e.message));
  await producers.start();
  await workers.start();
  try {
    const queues = Array.from({ length: FAN_OUT }, (_, i) => `bench-${i}`);
    for (const q of queues) await producers.createQueue(q);
    const perProducer = Math.ceil(jobs / FAN_OUT);
    const total = perProducer * FAN_OUT;
    const latencyMs: number[] = [];
    let done = 0;
    let lastCompleted = 0;
    const cpu0 = process.cpuUsage();
    const t0 = Date.now();
    const produce = Promise.all(
      queues.map(async (_, i) => {
        for (let k = 0; k < perProducer; k++) await producers.send(queues[(i + k) % FAN_OUT]!, { at: Date.now() });
      }),
    );
    const work = Promise.all(
      queues.map(async (q) => {
        while (done < total) {
          const batch = await workers.fetch(q, { batchSize: PGBOSS_BATCH });
          if (batch.length === 0) {
            await sleep(PGBOSS_IDLE_MS);
            continue;
          }
          await workers.complete(q, batch.map((j) => j.id));
          const now = Date.now();
          for (const j of batch) latencyMs.push(now - JobData.parse(j.data).at);
          done += batch.length;
          lastCompleted = now;
        }
      }),
    );
    await Promise.all([produce, work]);
    const appCpuCores = cpuCores(cpu0, t0);
    return {
      producers: FAN_OUT,
      queues: FAN_OUT,
      workers: FAN_OUT,
      jobs: total,
      fetchBatchSize: PGBOSS_BATCH,
      idlePollMs: PGBOSS_IDLE_MS,
      jobsPerSec: total / (Math.max(1, lastCompleted - t0) / 1000),
      latencyMs: latencies(latencyMs),
      appCpuCores,
      errors,
    };
  } finally {
    await workers.stop({ graceful: false, wait: true });
    await producers.stop({ graceful: false, wait: true });
  }
}

// ------------------------------------------------------------------ task compare-and-set

async function taskCas(database: DatabaseUrls, updaters: number, ms: number) {
  const db = createDb(database, DB_POOL);
  try {
    const team = await newTeam(db, 0, `cas ${updaters}`);
    const lead = leadOf(team.teamId);
    const task = await createTask(db, lead, { subject: "Benchmark task", description: "revision 1" });
    let updates = 0;
    let stale = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: updaters }, async (_, u) => {
        let revision = task.revision;
        while (performance.now() < start + ms) {
          try {
            const next = await updateTask(db, lead, {
              taskId: task.id,
              expectedRevision: revision,
              action: "edit",
              description: `updater ${u} after revision ${revision}`,
            });
            revision = next.revision;
            updates += 1;
          } catch (e) {
            if (!isAppError(e, "TEAM_TASK_STALE_REVISION")) throw e;
            stale += 1;
            revision = (await getTask(db, team.teamId, task.id)).revision;
          }
        }
      }),
    );
    const seconds = (performance.now() - start) / 1000;
    const final = await getTask(db, team.teamId, task.id);
    return { updaters, updates, staleRevisionRejections: stale, finalRevision: final.revision, updatesPerSec: updates / seconds };
  } finally {
    await db.$disconnect();
  }
}

// ------------------------------------------------------------------ main

async function main(): Promise<void> {
  const started = performance.now();
  await withBenchDatabase("at_bench_mbox", async (database) => {
    const url = directUrlOf(database);
    // The product's configuration (server/env.ts defaults), not the test harness's.
    const config = runtimeConfigFromEnv(parseEnv({}));

    const server = await serverInfo(url);

    progress(`pg commit rate, 1 connection, ${COMMIT_MS} ms`);
    const commit1 = await commitRate(url, 1, COMMIT_MS);

    progress("warm-up");
    await endToEnd(database, config, 2, 20);
    const e2e = [];
    for (const senders of SENDER_COUNTS) {
      progress(`end to end: ${senders} sender(s), ${MESSAGES} messages`);
      const r = await endToEnd(database, config, senders, MESSAGES);
      e2e.push({ ...r, messagesPerSec: round(r.messagesPerSec), ratioToCommitRate: round(r.messagesPerSec / commit1, 4) });
    }

    progress(`fan-out: ${FAN_OUT} senders to ${FAN_OUT} targets, ${MESSAGES} messages`);
    const fan = await fanOut(database, config, MESSAGES);
    progress(`fan-out without a consumer: ${MESSAGES} messages`);
    const fanAlone = await fanOut(database, config, MESSAGES, false);
    progress(`pg-boss: ${FAN_OUT} producers, ${FAN_OUT} queues, ${FAN_OUT} workers, ${MESSAGES} jobs`);
    const boss = await pgBoss(directUrlOf(database), MESSAGES);

    const cas = [];
    for (const updaters of [1, 8]) {
      progress(`task compare-and-set: ${updaters} updater(s), ${CAS_MS} ms`);
      const r = await taskCas(database, updaters, CAS_MS);
      cas.push({ ...r, updatesPerSec: round(r.updatesPerSec), ratioToCommitRate: round(r.updatesPerSec / commit1, 4) });
    }

    const result = {
      bench: "mailbox",
      at: new Date().toISOString(),
      machine: {
        cpus: os.cpus().length,
        loadAverage1m: round(os.loadavg()[0]!, 2),
        node: process.version,
        ...server,
      },
      setup: {
        runtimeConfig: { ...config, systemPrompt: undefined },
        dbPoolSize: DB_POOL,
        senderDbPoolSize: DB_POOL,
        scriptedModelDelayMs: 0,
        maxPending: "raised to the message count",
        processes: 1,
      },
      pgCommitRate: { durationMs: COMMIT_MS, singleRowInsertsPerSec1Conn: round(commit1) },
      endToEnd: e2e,
      fanOut: {
        ...fan,
        deliveredPerSec: round(fan.deliveredPerSec),
        consumedPerSec: round(fan.consumedPerSec),
        deliveredRatioToPgBoss: round(fan.deliveredPerSec / boss.jobsPerSec, 3),
        deliveredRatioToCommitRate: round(fan.deliveredPerSec / commit1, 4),
        consumedRatioToCommitRate: round(fan.consumedPerSec / commit1, 4),
      },
      fanOutWithoutConsumer: {
        ...fanAlone,
        deliveredPerSec: round(fanAlone.deliveredPerSec),
        deliveredRatioToPgBoss: round(fanAlone.deliveredPerSec / boss.jobsPerSec, 3),
        deliveredRatioToCommitRate: round(fanAlone.deliveredPerSec / commit1, 4),
      },
      pgBoss: { ...boss, jobsPerSec: round(boss.jobsPerSec), ratioToCommitRate: round(boss.jobsPerSec / commit1, 4) },
      taskCas: cas,
      totalSeconds: round((performance.now() - started) / 1000, 1),
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  });
}

runBench(main);
