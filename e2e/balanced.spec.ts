import type { ChildProcess } from "node:child_process";
import { expect, test } from "@playwright/test";
import pg from "pg";
import { createTemporaryDatabase, temporaryDatabaseName, testServerUrl } from "../server/testing/temporary-db";
import { type Haproxy, startHaproxy } from "../server/testing/haproxy";
import { startPgBouncer } from "../server/testing/pgbouncer";
import type { TranscriptEvent } from "../components/api-types";
import { foldTranscript } from "../components/room/transcript-model";
import { anonymousContext, createInstanceOwner, trpcQuery, type TestPerson } from "./accounts";
import { createTeam, finalAnswer, send, transcript } from "./helpers";
import { startServer, stopServer } from "./server";

// A browser watching a team through HAProxy in front of three app servers, on one database
// through PgBouncer in transaction mode. The balancer sends everything to the first server
// while it is up, and the team starts work while it is the only one, so the browser's page,
// requests and live feeds and the team's agents are all on it; once the other two have joined,
// it is killed (SIGKILL) while it drives one of the team's turns. The others
// take the agents over, the browser's feeds reconnect through the balancer, and the room ends
// with the team's work whole: every reply and message once, as the log has them.

const lbPort = Number(process.env.E2E_LB_PORT ?? 3197);
const appPorts = [3198, 3199, 3200].map((p, i) => Number(process.env[`E2E_LB_APP${i + 1}_PORT`] ?? p));
const base = `http://127.0.0.1:${lbPort}/`;
const OWNER: TestPerson = { name: "Bea Balanced", email: "bea@balanced.test", password: "bea-password-1" };

test("a browser's team room through the balancer stays whole when the process serving it, mid-turn, is killed", async ({ browser }) => {
  test.setTimeout(240_000);
  const database = await createTemporaryDatabase(testServerUrl(), temporaryDatabaseName("at_e2e_lb_"));
  const bouncer = await startPgBouncer(database.url, { poolSize: 10 });
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  const env = {
    E2E_DIRECT_DATABASE_URL: database.url,
    APP_URL: base.replace(/\/$/, ""),
    SCRIPTED_MODEL_DELAY_MS: "150",
    AGENT_LEASE_TTL_MS: "2000",
    RUNTIME_RECOVERY_INTERVAL_MS: "300",
  };
  const servers: ChildProcess[] = [];
  let lb: Haproxy | null = null;
  const context = await anonymousContext(browser, base);
  try {
    // One server at first: the browser's page, requests and feeds are on it, and so are the
    // team's agents. The other two join once the team is at work.
    const start = async (port: number) => servers.push(await startServer(bouncer.through(database.url), port, env));
    await start(appPorts[0]!);
    lb = await startHaproxy(appPorts, { port: lbPort, balance: "first" });
    const page = await context.newPage();
    await createInstanceOwner(page, OWNER);
    const teamId = await createTeam(page, "Balanced room");
    await send(page, "Build a tiny todo app");
    const first = servers[0]!;
    /** Whether the first server drives one of the team's turns right now. */
    const firstMidTurn = async () => {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM sessions WHERE team_id = $1 AND active_turn_id IS NOT NULL AND lease_expires_at > now() AND lease_owner LIKE $2`,
        [teamId, `proc-${first.pid}-%`],
      );
      return rows[0]!.n > 0;
    };
    await expect.poll(firstMidTurn, { timeout: 60_000 }).toBe(true);
    await expect(transcript(page).getByRole("article", { name: "Reply" }).first()).toBeVisible();
    await start(appPorts[1]!);
    await start(appPorts[2]!);
    // Killed while it drives a turn (the team is still at work: its turns last seconds).
    await expect.poll(firstMidTurn, { timeout: 60_000 }).toBe(true);
    first.kill("SIGKILL");

    // The team finishes on the other servers, and the room shows it without a reload.
    await expect(finalAnswer(page)).toBeVisible({ timeout: 120_000 });
    await expect.poll(async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM sessions WHERE active_turn_id IS NOT NULL`)).rows[0]!.n, { timeout: 30_000 }).toBe(0);
    // The cut turn (the Lead's or a teammate's) was closed as interrupted by another process.
    const { rows: ends } = await db.query<{ reason: string }>(
      `SELECT e.payload->>'reason' AS reason FROM session_events e JOIN sessions s ON s.id = e.session_id
        WHERE s.team_id = $1 AND e.payload->>'kind' = 'turn_end'`,
      [teamId],
    );
    expect(ends.map((e) => e.reason)).toContain("interrupted");

    // The room holds what the log holds, as the transcript folds it: every reply, prompt and
    // team message once.
    const { events } = await trpcQuery<{ events: TranscriptEvent[] }>(page.request, base, "session.transcript", { sessionId: teamId, limit: 1000 });
    const items = foldTranscript(events);
    const replies = items.filter((i) => i.kind === "assistant");
    const teamMessages = items.filter((i) => i.kind === "user" && i.source.kind === "team");
    const shown = (name: string | RegExp) => transcript(page).getByRole("article", { name });
    await expect(shown("Reply")).toHaveCount(replies.length);
    await expect(shown(/^Team message from /)).toHaveCount(teamMessages.length);
    await expect(shown(/^Prompt from /)).toHaveCount(1);
    const last = replies.at(-1);
    if (last?.kind !== "assistant") throw new Error("no reply in the log");
    await expect(shown("Reply").last()).toContainText(last.text.split("\n")[0]!);
  } finally {
    await context.close();
    for (const s of servers) if (s.exitCode === null && s.signalCode === null) await stopServer(s);
    await lb?.stop();
    await db.end();
    await bouncer.stop();
    await database.drop();
  }
});
