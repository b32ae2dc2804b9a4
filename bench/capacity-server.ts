// The app server of bench/capacity.ts as its own process, so its CPU and event loop are its
// own: the real startAppServer (HTTP, accounts, tRPC, SSE feeds, runtime, team layer; no
// pages) on DATABASE_URL (DIRECT_DATABASE_URL through a pooler), the product's configuration except that the keyless
// model plays the capacity playbook at BENCH_CAPACITY_CHUNK_MS per chunk, timed (TimedModel),
// and turns have no step cap. It talks to its parent over IPC only:
//
//   → { id, type: "sample" }  ← { id, type: "sample", cpu, loop }   process.cpuUsage() and the
//                                event-loop delay since the previous sample
//   → { id, type: "calls" }   ← { id, type: "calls", calls }        the model calls recorded
//                                since the previous "calls" (then forgotten)
//   → { id, type: "stop" }    ← { id, type: "stopped", ms }         server.close(): feeds end,
//                                open turns end as interrupted, leases released; then exit
//   ← { type: "ready", url }, { type: "log", line }, { type: "failed", error }
//
// The process stops the same way when its parent goes away (the IPC channel closes).
import { writeFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import pg from "pg";
import { databaseFromEnv } from "../server/db/client";
import { z } from "zod";
import { parseEnv } from "../server/env";
import { startAppServer, type AppServer } from "../server/main";
import { createModelResolver } from "../server/models/registry";
import { ScriptedModel } from "../server/models/scripted";
import { capacityPlaybook, LOOP_RESOLUTION_MS, loopDelayMs, ParentMessageSchema, TimedModel, type ChildMessage, type ModelCall } from "./capacity-shared";

const Knobs = z.object({
  DATABASE_URL: z.string().url(),
  DIRECT_DATABASE_URL: z.string().url().optional(),
  BENCH_CAPACITY_CHUNK_MS: z.coerce.number().int().nonnegative(),
});

function send(message: ChildMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.connected) return resolve();
    process.send!(message, undefined, {}, () => resolve());
  });
}

/**
 * BENCH_CAPACITY_QUERY_LOG=<file>: counts the statements the app server sends, by their first
 * 100 characters, and writes them to the file when it exits (where the commits go).
 */
function countQueries(file: string): void {
  const counts = new Map<string, number>();
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0];
    const text = typeof first === "string" ? first : typeof first === "object" && first && "text" in first ? String(first.text) : "?";
    const key = text.replace(/\s+/g, " ").trim().slice(0, 100);
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;
  process.on("exit", () => writeFileSync(file, JSON.stringify([...counts].sort((a, b) => b[1] - a[1]), null, 1)));
}

async function main(): Promise<void> {
  const knobs = Knobs.parse(process.env);
  if (process.env.BENCH_CAPACITY_QUERY_LOG) countQueries(process.env.BENCH_CAPACITY_QUERY_LOG);
  const env = parseEnv({
    PORT: "0",
    HOST: "127.0.0.1",
    SCRIPTED_MODEL_DELAY_MS: String(knobs.BENCH_CAPACITY_CHUNK_MS),
    MAX_STEPS_PER_TURN: "1000000000",
  });
  let calls: ModelCall[] = [];
  const timed = new TimedModel(new ScriptedModel({ delayMs: env.SCRIPTED_MODEL_DELAY_MS, playbook: capacityPlaybook }), env.SCRIPTED_MODEL_DELAY_MS, (c) =>
    calls.push(c),
  );
  const models = createModelResolver(env);
  const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loop.enable();

  let server: AppServer;
  try {
    server = await startAppServer({
      env,
      database: databaseFromEnv(knobs),
      pages: false,
      resolveModel: (choice) => (choice.provider === "scripted" ? timed : models(choice)),
      log: (line) => void send({ type: "log", line }),
    });
  } catch (e) {
    await send({ type: "failed", error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
    process.exit(1);
  }

  let stopping: Promise<number> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      const t0 = performance.now();
      await server.close();
      return performance.now() - t0;
    })());

  process.on("message", (raw: unknown) => {
    const parsed = ParentMessageSchema.safeParse(raw);
    if (!parsed.success) return void send({ type: "log", line: `capacity-server: unreadable message ${JSON.stringify(raw)}` });
    const { id, type } = parsed.data;
    if (type === "sample") {
      const sample: ChildMessage = { type: "sample", id, at: Date.now(), cpu: process.cpuUsage(), loop: loopDelayMs(loop) };
      loop.reset();
      void send(sample);
    } else if (type === "calls") {
      const out = calls;
      calls = [];
      void send({ type: "calls", id, calls: out });
    } else {
      void stop().then(async (ms) => {
        await send({ type: "stopped", id, ms });
        process.exit(0);
      });
    }
  });
  process.on("disconnect", () => void stop().finally(() => process.exit(0)));
  await send({ type: "ready", url: server.url });
}

main().catch(async (e: unknown) => {
  await send({ type: "failed", error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
  process.exit(1);
});
