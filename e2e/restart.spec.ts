import { expect, test } from "@playwright/test";
import pg from "pg";
import { createTemporaryDatabase, temporaryDatabaseName, testServerUrl } from "../server/testing/temporary-db";
import { anonymousContext, signUpOverApi } from "./accounts";
import { agentStatus, createTeam, finalAnswer, send, transcript } from "./helpers";
import { startServer, stopServer } from "./server";

// Kill the server with SIGKILL in the middle of a team run and start it again on the same
// database: the page reconnects by itself, still signed in (sessions live in the database),
// nothing is lost, and the scenario finishes. A live feed answered with a 503 meanwhile (a proxy
// in front while the server is away) ends the browser's event stream: it must open again by itself.

const port = Number(process.env.E2E_RESTART_PORT ?? 3190);
const base = `http://127.0.0.1:${port}/`;

test("a SIGKILLed server comes back: the room reconnects and the team finishes", async ({ browser }) => {
  test.setTimeout(180_000);
  // The e2e server migrates it.
  const database = await createTemporaryDatabase(testServerUrl(), temporaryDatabaseName("at_e2e_restart_"), { migrate: false });
  const { url } = database;
  let server = await startServer(url, port, { AGENT_LEASE_TTL_MS: "1500" });
  const context = await anonymousContext(browser, base);
  try {
    const page = await context.newPage();
    // A fresh instance: its first account owns it.
    await signUpOverApi(page.request, base, { name: "Rita Restart", email: "rita@example.test", password: "rita-password-1" });
    await createTeam(page, "Survives restarts");
    await send(page, "Build a tiny todo app");
    await expect(page.getByRole("button", { name: /^researcher \(teammate\)/ })).toBeVisible({ timeout: 30_000 });
    const promptsBefore = await transcript(page).getByRole("article", { name: "Prompt" }).count();

    server.kill("SIGKILL");
    await new Promise((r) => server.once("exit", r));
    await expect(page.getByRole("status").filter({ hasText: "Reconnecting" }).first()).toBeVisible({ timeout: 30_000 });
    // The next attempt of the team feed and of a session feed each gets a 503.
    const refused = new Set<string>();
    await page.route(/\/api\/trpc\/(team|session)\.live\?/, (route) => {
      const feed = new URL(route.request().url()).pathname;
      if (refused.has(feed)) return route.fallback();
      refused.add(feed);
      return route.fulfill({ status: 503, contentType: "text/plain", body: "Starting" });
    });
    await expect.poll(() => refused.size, { timeout: 30_000 }).toBe(2);
    server = await startServer(url, port, { AGENT_LEASE_TTL_MS: "1500" });

    await expect(finalAnswer(page)).toBeVisible({ timeout: 120_000 });
    await expect(agentStatus(page, "Idle")).toBeVisible({ timeout: 30_000 });
    await expect(transcript(page).getByRole("article", { name: "Prompt" })).toHaveCount(promptsBefore);
    await expect(page.getByRole("region", { name: "Completed tasks" }).getByRole("listitem")).toHaveCount(2);
    // The same session cookie still works after the restart: a reload shows the room, not sign-in.
    await page.reload();
    await expect(page.getByRole("heading", { name: "Survives restarts", level: 1 })).toBeVisible();
    await expect(page.getByRole("navigation", { name: "Account" }).getByRole("link", { name: "Rita Restart" })).toBeVisible();
  } finally {
    await context.close();
    await stopServer(server);
    await database.drop().catch(() => undefined);
  }
});

// The app's process SIGKILLed again and again while three keyless teams work, each prompted
// twice (the second prompt sent while the Lead plans the first), each kill once the teams have
// logged a set number of further events: every team still answers both prompts, once each,
// with every task completed, and the room shows it.
test("repeated kills: every team answers both prompts", async ({ browser }) => {
  test.setTimeout(300_000);
  const database = await createTemporaryDatabase(testServerUrl(), temporaryDatabaseName("at_e2e_kills_"), { migrate: false });
  const env = { AGENT_LEASE_TTL_MS: "1000", RUNTIME_RECOVERY_INTERVAL_MS: "200", SCRIPTED_MODEL_DELAY_MS: "5" };
  let server = await startServer(database.url, port, env);
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  const events = async () => (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM session_events")).rows[0]!.n;
  const context = await anonymousContext(browser, base);
  try {
    const page = await context.newPage();
    await signUpOverApi(page.request, base, { name: "Kim Kills", email: "kim@example.test", password: "kim-password-1" });
    const teams: { url: string; first: string; second: string }[] = [];
    for (const i of [1, 2, 3]) {
      const first = `Write a launch checklist for product ${i}`;
      const second = `Add a rollback plan for product ${i}`;
      await createTeam(page, `Kills ${i}`);
      await send(page, first);
      await expect(transcript(page).getByRole("article", { name: "Prompt" })).toHaveCount(1);
      await send(page, second);
      teams.push({ url: page.url(), first, second });
    }
    // Every prompt answered (whole, not cut off): the teams have nothing left to interrupt.
    const answered = async () =>
      (
        await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM session_events WHERE kind = 'assistant_message' AND payload->>'text' LIKE 'Final answer for%'
            AND NOT COALESCE((payload->>'interrupted')::boolean, false)`,
        )
      ).rows[0]!.n >= teams.length * 2;
    let kills = 0;
    for (const n of [15, 40, 8, 60, 25]) {
      const from = await events();
      // A kill once the teams logged n more events, unless they finished first (a stalled team does neither).
      await expect.poll(async () => (await events()) >= from + n || (await answered()), { timeout: 60_000 }).toBe(true);
      if (await answered()) break;
      kills += 1;
      server.kill("SIGKILL");
      await new Promise((r) => server.once("exit", r));
      server = await startServer(database.url, port, env);
    }

    expect(kills, "kills while the teams worked").toBeGreaterThanOrEqual(2);
    for (const team of teams) {
      // Each prompt answered once, in order (a reply cut off by a kill is kept, marked
      // interrupted, and given again).
      const answers = async () =>
        (
          await db.query<{ text: string }>(
            `SELECT split_part(e.payload->>'text', E'\n', 1) AS text FROM session_events e
              WHERE e.session_id = $1 AND e.kind = 'assistant_message' AND e.payload->>'text' LIKE 'Final answer for%'
                AND NOT COALESCE((e.payload->>'interrupted')::boolean, false) ORDER BY e.seq`,
            [team.url.split("/teams/")[1]!.split("?")[0]!],
          )
        ).rows.map((r) => r.text);
      await expect.poll(answers, { timeout: 120_000 }).toEqual([`Final answer for "${team.first}":`, `Final answer for "${team.second}":`]);
      // The room shows both (a cut-off answer, if any, before the whole one) and every task done.
      await page.goto(team.url);
      await expect(transcript(page).getByText(`Final answer for "${team.second}":`).last()).toBeVisible();
      await expect(transcript(page).getByText(`Final answer for "${team.first}":`).last()).toBeVisible();
      await expect(page.getByRole("region", { name: "Completed tasks" }).getByRole("listitem")).toHaveCount(4);
    }
  } finally {
    await context.close();
    await db.end();
    await stopServer(server);
    await database.drop().catch(() => undefined);
  }
});
