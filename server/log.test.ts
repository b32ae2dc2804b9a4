import { describe, expect, it as plain } from "vitest";
import { parseEnv } from "./env";
import { createLogger } from "./log";
import { startAppServer } from "./main";
import { promptSession } from "./runtime/sessions";
import { databaseTest } from "./testing/fixtures";
import { createTestPerson } from "./testing/people";
import { eventsOf, newTestSession, waitFor } from "./testing/runtime-harness";

// The log is JSON lines with level, time and where each came from; a whole run of the app (a
// keyless scenario, a failing provider, API and metrics requests carrying secrets and prompt
// text) writes no planted secret and no prompt text into any line.

const KEY = "sk-planted-provider-key-0123456789";
const AUTH = "planted-auth-secret-0123456789-abcdefghij";
const METRICS = "planted-metrics-token-0123456789";
const PROMPT = "PLANTED-PROMPT-TEXT-7f3a";
const lines: string[] = [];
const env = parseEnv({
  PORT: "0",
  HOST: "127.0.0.1",
  SCRIPTED_MODEL_DELAY_MS: "1",
  OPENAI_API_KEY: KEY,
  OPENAI_BASE_URL: "http://127.0.0.1:1/v1",
  MODEL_MAX_RETRIES: "0",
  AUTH_SECRET: AUTH,
  METRICS_TOKEN: METRICS,
});

const it = databaseTest().extend("app", { scope: "file" }, async ({ tdb }, { onCleanup }) => {
  const app = await startAppServer({ env, database: tdb, pages: false, log: (line) => lines.push(line) });
  onCleanup(() => app.close());
  return app;
});

describe("the log", () => {
  plain("scrubs configured secrets from every field and redacts authorization headers", () => {
    const out: string[] = [];
    const logger = createLogger({ secrets: [KEY], write: (l) => out.push(l) });
    logger.info({ detail: `calling with ${KEY}`, headers: { authorization: "Bearer abc" } }, `key ${KEY}`);
    expect(out).toHaveLength(1);
    const line = JSON.parse(out[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 30, msg: "key [secret]", detail: "calling with [secret]", headers: { authorization: "[secret]" } });
    expect(typeof line.time).toBe("string");
  });

  plain("scrubs pretty lines (npm run dev) too", () => {
    const out: string[] = [];
    const logger = createLogger({ pretty: true, secrets: [KEY], write: (l) => out.push(l) });
    logger.warn({ detail: `calling with ${KEY}` }, `key ${KEY}`);
    expect(out).toHaveLength(1);
    expect(out[0]).toContain("key [secret]");
    expect(out[0]).toContain("calling with [secret]");
    expect(out[0]).not.toContain(KEY);
    expect(() => JSON.parse(out[0]!)).toThrow();
  });

  it("a run of the app: JSON lines with request ids and agents' ids, and no secret or prompt text in any", async ({ app, db }) => {
    const owner = await createTestPerson(db, "Logan");
    const lead = await newTestSession(db, "Logged", owner);
    await promptSession(db, lead, { text: `Plan a launch. ${PROMPT}` });
    await waitFor(async () => ((await eventsOf(db, lead)).some((e) => e.payload.kind === "turn_end") ? true : null), 60_000, "the Lead's turn");
    // A provider that fails: the turn's failure is logged with the agent and the turn.
    const failing = await newTestSession(db, "Failing", owner);
    await db.session.update({ where: { id: failing }, data: { model: { provider: "openai-compatible", model: "gpt-4o-mini" } } });
    await promptSession(db, failing, { text: `Also ${PROMPT}` });
    await waitFor(async () => ((await eventsOf(db, failing)).some((e) => e.payload.kind === "turn_end") ? true : null), 60_000, "the failed turn");
    // Requests carrying the secrets and the prompt text.
    expect((await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${METRICS}`, "x-request-id": "req-planted-1" } })).status).toBe(200);
    await fetch(`${app.url}/api/trpc/session.transcript?input=${encodeURIComponent(JSON.stringify({ sessionId: lead, text: PROMPT }))}`, { headers: { authorization: `Bearer at_${KEY}` } });
    await waitFor(() => (lines.some((l) => l.includes("req-planted-1")) ? true : null), 5_000, "the request's line");

    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const p of parsed) {
      expect(typeof p.level).toBe("number");
      expect(typeof p.time).toBe("string");
    }
    expect(parsed.find((p) => p.requestId === "req-planted-1")).toMatchObject({ msg: "request", method: "GET", path: "/metrics", status: 200 });
    expect(parsed.find((p) => p.component === "runtime" && p.sessionId === failing && typeof p.turnId === "string")).toMatchObject({ level: 40, teamId: failing });
    const all = lines.join("\n");
    for (const planted of [KEY, AUTH, METRICS, PROMPT]) expect(all).not.toContain(planted);
  });
});
