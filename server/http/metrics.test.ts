import { describe, expect } from "vitest";
import { parseEnv } from "../env";
import { startAppServer } from "../main";
import { promptSession } from "../runtime/sessions";
import { databaseTest } from "../testing/fixtures";
import { createTestPerson } from "../testing/people";
import { eventsOf, newTestSession, waitFor } from "../testing/runtime-harness";

// /metrics on a real app server after a keyless team ran its scenario: refused without the token
// (or with a wrong one), and with it every family the operator needs, with values that moved.

const TOKEN = "metrics-token-0123456789";
const env = parseEnv({ PORT: "0", HOST: "127.0.0.1", SCRIPTED_MODEL_DELAY_MS: "1", METRICS_TOKEN: TOKEN });

const it = databaseTest().extend("app", { scope: "file" }, async ({ tdb }, { onCleanup }) => {
  const app = await startAppServer({ env, database: tdb, pages: false, log: () => undefined });
  onCleanup(() => app.close());
  return app;
});

/** The value of one series (its name with labels, as printed), or null. */
function valueOf(text: string, series: RegExp): number | null {
  const line = text.split("\n").find((l) => !l.startsWith("#") && series.test(l));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : null;
}

describe("/metrics", () => {
  it("answers only to METRICS_TOKEN, with the runtime's, the mailbox's and the pool's families", async ({ app, db }) => {
    expect((await fetch(`${app.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${app.url}/metrics`, { headers: { authorization: "Bearer metrics-token-wrong-wrong" } })).status).toBe(401);

    const owner = await createTestPerson(db, "Otto Ops");
    const lead = await newTestSession(db, "Metered", owner);
    await promptSession(db, lead, { text: "Plan a small launch" });
    // The keyless scenario (SPEC.md §11): teammates message each other, the Lead finishes.
    await waitFor(async () => ((await db.teamMessage.count({ where: { teamId: lead, state: "delivered" } })) >= 2 ? true : null), 60_000, "two messages delivered");
    await waitFor(async () => ((await eventsOf(db, lead)).some((e) => e.payload.kind === "turn_end") ? true : null), 60_000, "the Lead's turn");

    const res = await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    for (const family of [
      "http_requests_total",
      "http_request_duration_seconds",
      "live_feeds_open",
      "turns_total",
      "steps_total",
      "tool_calls_total",
      "model_tokens_total",
      "model_cost_total",
      "model_retries_total",
      "leases_held",
      "approvals_waiting",
      "mailbox_delivery_seconds",
      "db_pool_connections",
    ]) {
      expect(text).toContain(`# TYPE agent_teams_${family} `);
    }
    expect(valueOf(text, /^agent_teams_turns_total\{reason="completed"\}/)).toBeGreaterThanOrEqual(1);
    expect(valueOf(text, /^agent_teams_steps_total /)).toBeGreaterThan(1);
    expect(valueOf(text, /^agent_teams_tool_calls_total\{tool="spawn_teammate",outcome="ok"\}/)).toBe(2);
    expect(valueOf(text, /^agent_teams_model_tokens_total\{model="[^"]+",kind="output"\}/)).toBeGreaterThan(0);
    expect(valueOf(text, /^agent_teams_mailbox_delivery_seconds_count /)).toBeGreaterThanOrEqual(2);
    expect(valueOf(text, /^agent_teams_mailbox_delivery_seconds_bucket\{le="\+Inf"\}/)).toBe(valueOf(text, /^agent_teams_mailbox_delivery_seconds_count /));
    expect(valueOf(text, /^agent_teams_approvals_waiting /)).toBe(0);
    expect(valueOf(text, /^agent_teams_db_pool_connections\{state="max"\}/)).toBe(env.DATABASE_POOL_SIZE);
    // The first scrape's own request is counted by the second.
    const again = await (await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    expect(valueOf(again, /^agent_teams_http_requests_total\{route="metrics",method="GET",status="200"\}/)).toBeGreaterThanOrEqual(1);
    expect(valueOf(again, /^agent_teams_http_requests_total\{route="metrics",method="GET",status="401"\}/)).toBe(2);
  });
});
