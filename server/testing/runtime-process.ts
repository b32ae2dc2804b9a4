// A runtime host as its own OS process, for tests that need real separate processes (crash
// recovery, lease contention):
//
//   DATABASE_URL=… node --import tsx server/testing/runtime-process.ts
//
// Wired like server/main.ts (same Runtime, same model resolver, config from the same env vars)
// minus HTTP. Settings come from the environment (server/env.ts names):
//   AGENT_LEASE_TTL_MS, RUNTIME_RECOVERY_INTERVAL_MS, AGENT_IDLE_EVICT_MS,
//   SCRIPTED_MODEL_DELAY_MS, MAX_STEPS_PER_TURN, COMPACTION_BUDGET_TOKENS, and knobs of this
//   script only: RUNTIME_DELTA_FLUSH_MS (default 10), RUNTIME_DB_POOL_SIZE (default 5),
//   RUNTIME_TEAM=1 (wire the Agent Teams layer and the team playbook, as server/main.ts does),
//   RUNTIME_PAUSE_AFTER_EFFECT=<tool name> (the first call of that tool stops right after its
//   effect committed, before its result is reported: a crash window to kill in; a graceful stop
//   lets it go on, as a shutdown while a call runs),
//   RUNTIME_DRIVE=all|leads|teammates (which agents this process may drive: multi-process
//   tests put a team's members in different processes),
//   RUNTIME_PAUSE_AFTER_ROUTINE_CLAIM=1 (the first routine this process claims stops right after
//   the claim, before its run is written: a crash window to kill in).
//
// Protocol on stdout, one line each:
//   READY <ownerId>   the runtime started (recovery sweep done, heartbeats running)
//   LOG <line>        a runtime log line (lease lost, crash recovery, …)
//   PAUSED <tool> <callKey>   RUNTIME_PAUSE_AFTER_EFFECT reached its window (nothing more happens
//                     until a graceful stop)
//   CLAIMED <routineId>   RUNTIME_PAUSE_AFTER_ROUTINE_CLAIM reached its window (held until a stop)
//   STOPPED           graceful stop finished (SIGTERM / SIGINT): open turns ended as
//                     interrupted, leases released, inboxes kept
// Exit code 0 after a graceful stop, 1 on a start-up or stop failure.
//
// The process also stops gracefully when its parent dies (it gets re-parented), so a test
// runner that is killed does not leave runtimes behind driving a dropped database.
import { z } from "zod";
import { createDb, databaseFromEnv } from "../db/client";
import { parseEnv } from "../env";
import { ActivityHub } from "../live/activity";
import { availableModels, createModelResolver, priceOf } from "../models/registry";
import { runtimeConfigFromEnv } from "../runtime/config";
import { Runtime } from "../runtime/runtime";
import { teamPlaybook } from "../team/playbook";
import { runnerHooks } from "../routines/runner";
import { createTeamLayer } from "../team-layer";

const Extra = z.object({
  RUNTIME_DELTA_FLUSH_MS: z.coerce.number().int().nonnegative().default(10),
  RUNTIME_DB_POOL_SIZE: z.coerce.number().int().positive().default(5),
  RUNTIME_TEAM: z.enum(["0", "1"]).default("0"),
  RUNTIME_PAUSE_AFTER_EFFECT: z.string().optional(),
  RUNTIME_DRIVE: z.enum(["all", "leads", "teammates"]).default("all"),
  RUNTIME_PAUSE_AFTER_ROUTINE_CLAIM: z.enum(["0", "1"]).default("0"),
});

function out(line: string): Promise<void> {
  return new Promise((resolve) => process.stdout.write(`${line}\n`, () => resolve()));
}
// A reader that went away (EPIPE) must not crash the runtime: the lines are only a report.
process.stdout.on("error", () => undefined);

async function main(): Promise<void> {
  const env = parseEnv();
  const extra = Extra.parse({
    RUNTIME_DELTA_FLUSH_MS: process.env.RUNTIME_DELTA_FLUSH_MS || undefined,
    RUNTIME_DB_POOL_SIZE: process.env.RUNTIME_DB_POOL_SIZE || undefined,
    RUNTIME_TEAM: process.env.RUNTIME_TEAM || undefined,
    RUNTIME_PAUSE_AFTER_EFFECT: process.env.RUNTIME_PAUSE_AFTER_EFFECT || undefined,
    RUNTIME_DRIVE: process.env.RUNTIME_DRIVE || undefined,
    RUNTIME_PAUSE_AFTER_ROUTINE_CLAIM: process.env.RUNTIME_PAUSE_AFTER_ROUTINE_CLAIM || undefined,
  });
  const database = databaseFromEnv(env);

  const db = createDb(database, extra.RUNTIME_DB_POOL_SIZE);
  const hub = new ActivityHub(database);
  await hub.start();
  const team = extra.RUNTIME_TEAM === "1";
  let paused = false;
  // A graceful stop releases a paused call (a shutdown while the call runs); a kill never does.
  let stopStarted!: () => void;
  const stopping$ = new Promise<void>((resolve) => (stopStarted = resolve));
  if (extra.RUNTIME_PAUSE_AFTER_ROUTINE_CLAIM === "1") {
    runnerHooks.afterClaim = async (routineId) => {
      runnerHooks.afterClaim = undefined;
      await out(`CLAIMED ${routineId}`);
      await stopping$;
    };
  }
  const runtime = new Runtime({
    db,
    hub,
    config: { ...runtimeConfigFromEnv(env), deltaFlushMs: extra.RUNTIME_DELTA_FLUSH_MS },
    resolveModel: createModelResolver(env, team ? { playbook: teamPlaybook } : {}),
    priceOf: (c) => priceOf(env, c),
    ...(team ? createTeamLayer(db, hub, { provisioningGraceMs: 60_000, models: availableModels(env), mcp: { secretsKey: env.MCP_SECRETS_KEY } }) : {}),
    afterToolEffect: async (_sessionId, toolName, callKey) => {
      if (paused || toolName !== extra.RUNTIME_PAUSE_AFTER_EFFECT) return;
      paused = true;
      await out(`PAUSED ${toolName} ${callKey}`);
      await stopping$;
    },
    log: (line) => void out(`LOG ${line.replace(/\n/g, "\\n")}`),
    ...(extra.RUNTIME_DRIVE === "all"
      ? {}
      : {
          drives: async (id) => {
            const s = await db.session.findUnique({ where: { id }, select: { memberName: true } });
            return (s?.memberName === null) === (extra.RUNTIME_DRIVE === "leads");
          },
        }),
  });
  await runtime.start();

  let stopping: Promise<void> | null = null;
  const stop = (why: string) =>
    (stopping ??= (async () => {
      stopStarted();
      const watchdog = setTimeout(() => {
        process.stderr.write(`runtime-process: graceful stop (${why}) took too long, exiting\n`);
        process.exit(1);
      }, 15_000);
      watchdog.unref();
      try {
        await runtime.stop();
        await hub.close();
        await db.$disconnect();
        await out("STOPPED");
        process.exit(0);
      } catch (e) {
        process.stderr.write(`runtime-process: stop failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
        process.exit(1);
      }
    })());
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));

  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void stop("parent exited");
  }, 500).unref();

  await out(`READY ${runtime.ownerId}`);
}

main().catch((e: unknown) => {
  process.stderr.write(`runtime-process: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
