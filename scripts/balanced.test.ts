import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db, directUrlOf } from "../server/db/client";
import { asSessionId } from "../server/ids";
import type { SessionEvent } from "../server/runtime/events";
import { listMessages } from "../server/team/mailbox";
import { listMembers } from "../server/team/roster";
import { listTasks } from "../server/team/task-board";
import { createTestDatabase, type TestDatabase } from "../server/testing/db";
import { startHaproxy, type Haproxy } from "../server/testing/haproxy";
import { httpClient } from "../server/testing/http-client";
import { freePort } from "../server/testing/net";
import { signUpOverHttp } from "../server/testing/people";
import { startPgBouncer, type PgBouncer } from "../server/testing/pgbouncer";
import { eventsOf, waitFor } from "../server/testing/runtime-harness";
import type { SessionLiveMessage as LiveMessage } from "../server/live/feed-readers";

// Three `npm start` processes behind HAProxy, on one database through PgBouncer in transaction
// mode (LISTEN and migrations direct), as an operator deploys several app processes. Teams are
// prompted through the balancer and watched through it; the process driving a turn is killed
// (SIGKILL) mid-turn. Every team still finishes, each effect happened once, and every live
// feed reconnected through the balancer and holds each event once, in order.

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TEAMS = 3;
/** Viewers per Lead: with round robin, six feeds reach every process twice. */
const VIEWERS = 2;

interface App {
  proc: ChildProcess;
  port: number;
  output: string[];
}

let tdb: TestDatabase;
let bouncer: PgBouncer;
let lb: Haproxy;
let db: Db;
const apps: App[] = [];

async function startApp(env: Record<string, string>): Promise<App> {
  const port = await freePort();
  const proc = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts", "--no-pages"], {
    cwd: ROOT,
    env: { NODE_ENV: "production", PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", PORT: String(port), HOST: "127.0.0.1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const app: App = { proc, port, output: [] };
  proc.stdout!.on("data", (d: Buffer) => app.output.push(d.toString()));
  proc.stderr!.on("data", (d: Buffer) => app.output.push(d.toString()));
  const ready = () => fetch(`http://127.0.0.1:${port}/api/health/ready`).then((r) => r.ok, () => false);
  await waitFor(async () => (await ready()) || proc.exitCode !== null, 120_000, `the app on ${port}`);
  if (proc.exitCode !== null) throw new Error(`the app on ${port} exited: ${app.output.join("")}`);
  return app;
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  const direct = directUrlOf(tdb);
  bouncer = await startPgBouncer(direct, { poolSize: 10 });
  db = createDb({ url: direct }, 4);
  const lbPort = await freePort();
  const env = {
    DATABASE_URL: bouncer.through(direct),
    DIRECT_DATABASE_URL: direct,
    DATABASE_POOL_SIZE: "8",
    APP_URL: `http://127.0.0.1:${lbPort}`,
    SCRIPTED_MODEL_DELAY_MS: "40",
    AGENT_LEASE_TTL_MS: "2000",
    RUNTIME_RECOVERY_INTERVAL_MS: "300",
    AUTH_SIGN_IN_PER_MINUTE: "1000",
    LOG_LEVEL: "warn",
  };
  apps.push(...(await Promise.all([startApp(env), startApp(env), startApp(env)])));
  lb = await startHaproxy(apps.map((a) => a.port), { port: lbPort });
}, 180_000);

afterAll(async () => {
  for (const a of apps) if (a.proc.exitCode === null && a.proc.signalCode === null) a.proc.kill("SIGKILL");
  await lb?.stop();
  await db?.$disconnect();
  await bouncer?.stop();
  await tdb?.drop();
});

/** One viewer's feed of a session through the balancer: every event it was sent, and its reconnects. */
function watch(client: ReturnType<typeof httpClient>, sessionId: string) {
  const feed = { events: [] as SessionEvent[], connects: 0, state: "idle", errors: [] as string[] };
  const sub = client.session.live.subscribe(
    { sessionId, lastEventId: null },
    {
      onData: ({ data }: { data: LiveMessage }) => {
        if (data.type === "events") feed.events.push(...data.events);
      },
      onConnectionStateChange: (state) => {
        // "connecting" at the start and after each cut; "pending" once the stream answers.
        if (state.state === "connecting") feed.connects += 1;
        feed.state = state.state;
      },
      onError: (e) => feed.errors.push(String(e)),
    },
  );
  return { feed, close: () => sub.unsubscribe() };
}

const finished = (events: SessionEvent[]) => events.some((e) => e.payload.kind === "assistant_message" && e.payload.text.includes("Final answer"));

describe("three app processes behind HAProxy, through PgBouncer", () => {
  it("every team finishes when the process driving a turn is killed; each effect once; feeds reconnect with no gap", { timeout: 240_000 }, async () => {
    const owner = await signUpOverHttp(lb.url, { name: "Operator" });
    const client = httpClient(lb.url, { cookie: owner.cookie });
    const leads: string[] = [];
    for (let i = 0; i < TEAMS; i++) leads.push((await client.session.create.mutate({ title: `Balanced ${i + 1}` })).id);
    const feeds = leads.flatMap((lead) => Array.from({ length: VIEWERS }, () => ({ lead, ...watch(client, lead) })));
    // Every feed has its first answer (the transcript so far) before anything runs.
    await waitFor(() => feeds.every((f) => f.feed.state === "pending") || null, 30_000, "feeds connected");
    for (const lead of leads) await client.session.prompt.mutate({ sessionId: lead, text: "Build a tiny todo app" });

    // The process driving some agent mid-turn (a lease held, a turn open), killed.
    const pids = new Set(apps.map((a) => a.proc.pid));
    const victim = await waitFor(
      async () => {
        const rows = await db.session.findMany({ where: { activeTurnId: { not: null }, leaseExpiresAt: { gt: new Date() } }, select: { leaseOwner: true } });
        const pid = rows.map((r) => Number(/^proc-(\d+)-/.exec(r.leaseOwner ?? "")?.[1])).find((p) => pids.has(p));
        return apps.find((a) => a.proc.pid === pid);
      },
      60_000,
      "a process driving a turn",
    );
    const connectsBefore = feeds.reduce((n, f) => n + f.feed.connects, 0);
    victim.proc.kill("SIGKILL");

    for (const lead of leads) await waitFor(async () => finished(await eventsOf(db, asSessionId(lead))), 180_000, `team ${lead} to finish`);
    // No agent still working anywhere, then every feed caught up with its log.
    await waitFor(async () => (await db.session.count({ where: { activeTurnId: { not: null } } })) === 0, 60_000, "every turn closed");
    const logs = new Map<string, SessionEvent[]>();
    for (const lead of leads) logs.set(lead, await eventsOf(db, asSessionId(lead)));
    await waitFor(() => feeds.every((f) => f.feed.events.length >= logs.get(f.lead)!.length) || null, 30_000, "feeds caught up");
    for (const f of feeds) f.close();

    // At least one feed was served by the killed process and came back through the balancer.
    expect(feeds.reduce((n, f) => n + f.feed.connects, 0)).toBeGreaterThan(connectsBefore);
    for (const f of feeds) {
      // Each event once, in order, and the same as the log.
      expect(f.feed.events.map((e) => e.seq)).toEqual(logs.get(f.lead)!.map((e) => e.seq));
      expect(f.feed.events.map((e) => e.payload.kind)).toEqual(logs.get(f.lead)!.map((e) => e.payload.kind));
    }

    const endReasons: string[] = [];
    for (const lead of leads) {
      const team = asSessionId(lead);
      // Each agent driven by one process at a time: its turns never overlap.
      for (const m of await listMembers(db, team)) {
        const events = await eventsOf(db, asSessionId(m.sessionId));
        const kinds = events.map((e) => e.payload.kind).filter((k) => k === "turn_start" || k === "turn_end");
        expect(kinds.join(" ")).toMatch(/^(turn_start turn_end ?)*$/);
        for (const e of events) if (e.payload.kind === "turn_end") endReasons.push(e.payload.reason);
      }
      // Each effect once: the scenario's team, tasks and messages exactly.
      expect((await listMembers(db, team)).map((m) => m.name)).toEqual(["lead", "researcher", "implementer"]);
      expect((await listTasks(db, team, {})).tasks.map((t) => [t.id, t.status])).toEqual([
        ["task-1", "completed"],
        ["task-2", "completed"],
      ]);
      expect((await listMessages(db, team, {})).map((m) => [m.senderName, m.targetName])).toEqual([
        ["researcher", "implementer"],
        ["implementer", "lead"],
      ]);
    }
    // The killed process's turn was closed by another one, as cut off.
    expect(endReasons).toContain("interrupted");
    const survivors = apps.filter((a) => a !== victim);
    expect(survivors.every((a) => a.proc.exitCode === null)).toBe(true);
    expect(survivors.map((a) => a.output.join(""))).not.toContainEqual(expect.stringMatching(/prepared statement|"level":50/));
  });
});
