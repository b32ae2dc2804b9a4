// Team mailbox throughput and delivery latency against a real Postgres, next to the raw commit
// rate of the same server measured in the same run. Figures only, no assertions.
//
//   npm run bench:mailbox          (TEST_DATABASE_URL, default postgresql://postgres@127.0.0.1:5432/postgres)
//
// Creates its own database (migrated with the project's runner), drops it at the end, and
// prints ONE JSON object on stdout; progress goes to stderr. Knobs: BENCH_MESSAGES (messages
// per scenario, default 400), BENCH_COMMIT_MS (default 2000), BENCH_CAS_MS (default 2000).
//
// - pgCommitRate: single-row INSERT autocommits with plain `pg`, 1 connection.
// - endToEnd: 1 and 8 concurrent senders (teammates) send BENCH_MESSAGES messages in total to
//   one teammate through sendMessage (queued row committed, then delivered into the inbox). One
//   Runtime (the product's config and DB pool, scripted model at zero delay, markConsumed as its
//   onClaimed hook) drives the target, so every message goes send → delivered → consumed. The
//   senders have their own pool (as tool calls of other agents or another process would).
//   maxPending is raised to the message count so the mailbox limit does not throttle the run.
//   messagesPerSec = messages / (last consumedAt − first send call start); delivery latency is
//   deliveredAt − the send call's start, consumption latency consumedAt − the same start (the
//   database's clock against this process's clock, same host). Each rate is also given as a
//   ratio to the commit rate.
// - taskCas: updateTask (server/team/task-board.ts) compare-and-set edits of one task by the
//   Lead: one updater in a loop, and 8 updaters contending for the same task (each re-reads the
//   revision and retries after TEAM_TASK_STALE_REVISION), BENCH_CAS_MS each.
import os from "node:os";
import { createDb, type Db } from "../server/db/client";
import { commitRate, percentile, progress, round, runBench, serverInfo, waitUntil, withBenchDatabase } from "./support";
import { parseEnv } from "../server/env";
import { isAppError } from "../server/errors";
import { asSessionId, newSessionId, type SessionId } from "../server/ids";
import { ActivityHub } from "../server/live/activity";
import { ModelChoiceSchema } from "../server/models/choice";
import { ScriptedModel } from "../server/models/scripted";
import { runtimeConfigFromEnv, type RuntimeConfig } from "../server/runtime/config";
import { Runtime } from "../server/runtime/runtime";
import { createSession } from "../server/runtime/sessions";
import { markConsumed, sendMessage, type SendStatus } from "../server/team/mailbox";
import { leadOf, type MemberRef } from "../server/team/membership";
import { createTask, getTask, updateTask } from "../server/team/task-board";

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 400);
const COMMIT_MS = Number(process.env.BENCH_COMMIT_MS ?? 2000);
const CAS_MS = Number(process.env.BENCH_CAS_MS ?? 2000);
const SENDER_COUNTS = [1, 8];
/** createDb's default, as server/main.ts uses it. */
const DB_POOL = 10;


// ------------------------------------------------------------------ raw Postgres commit rate

// ------------------------------------------------------------------ a team

interface Team {
  teamId: SessionId;
  senders: MemberRef[];
  target: MemberRef;
}

async function newTeam(db: Db, senders: number, label: string): Promise<Team> {
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
  return { teamId, senders: list, target: await member("target") };
}

// ------------------------------------------------------------------ end to end

async function endToEnd(url: string, config: RuntimeConfig, senders: number, messages: number) {
  const db = createDb(url, DB_POOL);
  const hub = new ActivityHub(url);
  await hub.start();
  const model = new ScriptedModel({ delayMs: 0 });
  const logs: string[] = [];
  const runtime = new Runtime({
    db,
    hub,
    config: { ...config, maxStepsPerTurn: 1_000_000 },
    resolveModel: () => model,
    onClaimed: markConsumed,
    log: (l) => {
      logs.push(l);
      progress(`runtime: ${l}`);
    },
  });
  await runtime.start();
  const senderDb = createDb(url, DB_POOL);
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
    await runtime.stop();
    await hub.close();
    await senderDb.$disconnect();
    await db.$disconnect();
  }
}

// ------------------------------------------------------------------ task compare-and-set

async function taskCas(url: string, updaters: number, ms: number) {
  const db = createDb(url, DB_POOL);
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
  await withBenchDatabase("at_bench_mbox", async (url) => {
    // The product's configuration (server/env.ts defaults), not the test harness's.
    const config = runtimeConfigFromEnv(parseEnv({}));

    const server = await serverInfo(url);

    progress(`pg commit rate, 1 connection, ${COMMIT_MS} ms`);
    const commit1 = await commitRate(url, 1, COMMIT_MS);

    progress("warm-up");
    await endToEnd(url, config, 2, 20);
    const e2e = [];
    for (const senders of SENDER_COUNTS) {
      progress(`end to end: ${senders} sender(s), ${MESSAGES} messages`);
      const r = await endToEnd(url, config, senders, MESSAGES);
      e2e.push({ ...r, messagesPerSec: round(r.messagesPerSec), ratioToCommitRate: round(r.messagesPerSec / commit1, 4) });
    }

    const cas = [];
    for (const updaters of [1, 8]) {
      progress(`task compare-and-set: ${updaters} updater(s), ${CAS_MS} ms`);
      const r = await taskCas(url, updaters, CAS_MS);
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
      taskCas: cas,
      totalSeconds: round((performance.now() - started) / 1000, 1),
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  });
}

runBench(main);
