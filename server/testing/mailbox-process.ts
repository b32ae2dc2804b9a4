// A mailbox host as its own OS process, for the mailbox crash tests (server/team/mailbox.test.ts):
//
//   DATABASE_URL=… node --import tsx server/testing/mailbox-process.ts
//
// Environment:
//   MAILBOX_RUNTIME=1          also host a runtime (test harness config, scripted model) whose
//                              onClaimed hook is consumedStatement, plus periodic mailbox recovery;
//                              without it the process only sends (it drives no agent)
//   SCRIPTED_MODEL_DELAY_MS    pause between streamed chunks (default 0)
//   AGENT_LEASE_TTL_MS         lease TTL of the hosted runtime (default 1000)
//   MAILBOX_RECOVERY_INTERVAL_MS  with MAILBOX_RUNTIME=1: mailbox recovery runs at start-up and,
//                              when this is > 0, periodically (default 0: start-up only, so a
//                              message left queued on purpose stays queued until the kill)
//
// Protocol: commands on stdin, one JSON object a line; answers on stdout, one line each.
//   {"op":"send","input":SendMessageInput}        → OK {"messageId","status"}   (sendMessage)
//   {"op":"queue","input":SendMessageInput}       → OK {"messageId"}            (queueMessage only)
//   {"op":"send-hang","input":SendMessageInput}   → QUEUED <messageId>, then nothing: sendMessage
//        stops in its afterQueued hook forever, between the committed queued row and delivery
//   a refused command                             → ERR <code> <message>
// Other lines: READY <ownerId or "-"> once started, LOG <line> for runtime/mailbox log lines.
//
// The tests end it with SIGKILL. It also exits when its parent dies (it gets re-parented).
import { createInterface } from "node:readline";
import { z } from "zod";
import { createDb, databaseFromEnv, type Db } from "../db/client";
import { isAppError } from "../errors";
import { asSessionId } from "../ids";
import {
  consumedStatement,
  queueMessage,
  recoverMailbox,
  sendMessage,
  type SendMessageInput,
} from "../team/mailbox";
import { startTestRuntime } from "./runtime-harness";

const Member = z.object({ sessionId: z.string().transform(asSessionId), name: z.string() });
const Input = z.object({ teamId: z.string(), sender: Member, target: Member, content: z.string() });
const Command = z.object({ op: z.enum(["send", "queue", "send-hang"]), input: Input });

function out(line: string): Promise<void> {
  return new Promise((resolve) => process.stdout.write(`${line}\n`, () => resolve()));
}
process.stdout.on("error", () => undefined);

/**
 * Mailbox recovery now and then every `intervalMs`, one run at a time, as a host process would
 * run it; resolves with the first run's count.
 */
function recoverEvery(db: Db, intervalMs: number, log: (line: string) => void): Promise<number> {
  let running: Promise<number> | null = null;
  const run = (): Promise<number> =>
    (running ??= recoverMailbox(db, { log })
      .catch((e: unknown) => {
        log(`mailbox recovery failed: ${e instanceof Error ? e.message : String(e)}`);
        return 0;
      })
      .finally(() => (running = null)));
  setInterval(() => void run(), Math.max(50, intervalMs));
  return run();
}

async function main(): Promise<void> {
  const database = databaseFromEnv({ DATABASE_URL: process.env.DATABASE_URL, DIRECT_DATABASE_URL: process.env.DIRECT_DATABASE_URL });
  const log = (line: string) => void out(`LOG ${line.replace(/\n/g, "\\n")}`);

  let db: Db;
  let ownerId = "-";
  if (process.env.MAILBOX_RUNTIME === "1") {
    const rt = await startTestRuntime(database, {
      delayMs: Number(process.env.SCRIPTED_MODEL_DELAY_MS ?? 0),
      config: { leaseTtlMs: Number(process.env.AGENT_LEASE_TTL_MS ?? 1000), recoveryIntervalMs: 200 },
      onClaimed: consumedStatement,
    });
    // The harness keeps runtime log lines in memory; forward them as they come.
    const push = rt.logs.push.bind(rt.logs);
    rt.logs.push = (...lines: string[]) => {
      for (const l of lines) log(l);
      return push(...lines);
    };
    db = rt.db;
    ownerId = rt.runtime.ownerId;
    const interval = Number(process.env.MAILBOX_RECOVERY_INTERVAL_MS ?? 0);
    if (interval > 0) await recoverEvery(db, interval, log);
    else await recoverMailbox(db, { log });
  } else {
    db = createDb(database, 5);
  }

  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 500).unref();

  // Commands run one at a time, in order.
  let chain = Promise.resolve();
  createInterface({ input: process.stdin }).on("line", (line) => {
    if (line.trim() === "") return;
    chain = chain.then(() => handle(db, line, log));
  });
  await out(`READY ${ownerId}`);
}

async function handle(db: Db, line: string, log: (line: string) => void): Promise<void> {
  try {
    const cmd = Command.parse(JSON.parse(line));
    const input: SendMessageInput = cmd.input;
    if (cmd.op === "send") {
      await out(`OK ${JSON.stringify(await sendMessage(db, input, { log }))}`);
    } else if (cmd.op === "queue") {
      const q = await queueMessage(db, input, { log });
      await out(`OK ${JSON.stringify({ messageId: q.messageId })}`);
    } else {
      await sendMessage(db, input, {
        log,
        afterQueued: async (messageId) => {
          await out(`QUEUED ${messageId}`);
          await new Promise<never>(() => undefined);
        },
      });
    }
  } catch (e) {
    const code = isAppError(e) ? e.code : "ERROR";
    await out(`ERR ${code} ${e instanceof Error ? e.message : String(e)}`.replace(/\n/g, "\\n"));
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`mailbox-process: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
