import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { randomBytes } from "node:crypto";
import { describe, expect } from "vitest";
import type { SessionEvent } from "../runtime/events";
import { promptSession } from "../runtime/sessions";
import { setPrivateWebhooksAllowed } from "../people/instance";
import { setToolMode } from "../team/tool-policy";
import { eventsOf, newTestSession } from "../testing/runtime-harness";
import { addMcpServer, checkMcpServer } from "./servers";
import { parseEnv } from "../env";
import { asUserId } from "../ids";
import { startAppServer } from "../main";
import { createApiToken, revokeApiToken } from "../people/api-tokens";
import { databaseTest } from "../testing/fixtures";
import { createTestPerson } from "../testing/people";
import { waitFor } from "../testing/runtime-harness";
import { MCP_PATH } from "../mcp-server/http";

// The product as an MCP server, driven by the official SDK's client over Streamable HTTP
// against a real app server: a personal API token is required (401 without, or once revoked),
// a stranger's team is not found, and a keyless team is created, prompted and read through
// MCP tools only.

const KEY = randomBytes(32).toString("base64");
const env = parseEnv({ PORT: "0", HOST: "127.0.0.1", SCRIPTED_MODEL_DELAY_MS: "1", MCP_SECRETS_KEY: KEY });

const it = databaseTest().extend("app", { scope: "file" }, async ({ tdb }, { onCleanup }) => {
  const app = await startAppServer({ env, database: tdb, pages: false, log: () => undefined });
  onCleanup(() => app.close());
  return app;
});

async function connect(url: string, token: string | null): Promise<Client> {
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}${MCP_PATH}`), { requestInit: { headers } }));
  return client;
}

/** A tool's answer: its JSON, or its refusal text. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ error: string | null; value: unknown }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
  return result.isError ? { error: text, value: null } : { error: null, value: JSON.parse(text) as unknown };
}

describe("/api/mcp", () => {
  it("refuses a request without a live token, and serves a keyless team through tools only", async ({ app, db }) => {
    const plain = await fetch(`${app.url}${MCP_PATH}`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "{}" });
    expect(plain.status).toBe(401);
    expect(plain.headers.get("www-authenticate")).toContain("Bearer");
    await expect(connect(app.url, "at_not-a-token")).rejects.toThrow(/Unauthorized/);

    const owner = await createTestPerson(db, "Mona");
    const { token, id } = await createApiToken(db, asUserId(owner.id), "mcp host");
    const client = await connect(app.url, token);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(["list_teams", "create_team", "prompt", "steer", "stop", "roster", "transcript", "task_board", "list_files", "read_file", "pending_requests", "decide", "answer", "list_memories", "decide_memory", "list_routines", "create_routine", "run_routine"]),
    );
    expect((await client.listTools()).tools.find((t) => t.name === "roster")!.annotations).toMatchObject({ readOnlyHint: true });

    const created = (await call(client, "create_team", { title: "Via MCP" })).value as { id: string };
    expect((await call(client, "list_teams")).value).toEqual([expect.objectContaining({ id: created.id, title: "Via MCP", myRole: "owner" })]);
    await call(client, "prompt", { session_id: created.id, text: "hello" });
    await waitFor(
      async () => {
        const page = (await call(client, "transcript", { session_id: created.id })).value as { events: { payload: { kind: string } }[] };
        return page.events.some((e) => e.payload.kind === "turn_end") || null;
      },
      20_000,
      "the Lead's answer",
    );
    expect((await call(client, "roster", { team_id: created.id })).value).toEqual(expect.arrayContaining([expect.objectContaining({ name: "lead", role: "lead" })]));
    // The whole keyless scenario (SPEC.md §11), watched through MCP only: both teammates, both tasks done.
    await waitFor(
      async () => {
        const board = (await call(client, "task_board", { team_id: created.id })).value as { tasks: { status: string }[] };
        return board.tasks.length === 2 && board.tasks.every((t) => t.status === "completed") ? true : null;
      },
      60_000,
      "both tasks completed",
    );
    const members = ((await call(client, "roster", { team_id: created.id })).value as { name: string }[]).map((m) => m.name);
    expect(members).toEqual(expect.arrayContaining(["lead", "researcher", "implementer"]));
    expect((await call(client, "pending_requests", { team_id: created.id })).value).toEqual([]);
    // Steering an agent with no running turn queues the text instead, and says so.
    await waitFor(async () => ((await call(client, "roster", { team_id: created.id })).value as { status: string }[]).every((m) => m.status !== "running") || null, 30_000, "the team at rest");
    // The Lead's proposed memory is reviewed over MCP: approved as edited, once.
    const [proposed] = (await call(client, "list_memories", { team_id: created.id })).value as { id: string; text: string }[];
    expect(proposed?.text).toMatch(/^"hello" was done in two steps/);
    const decided = { team_id: created.id, memory_id: proposed!.id, approve: true, text: "Say hello in two steps.", tags: ["greeting"] };
    expect((await call(client, "decide_memory", decided)).value).toMatchObject({ status: "approved", text: "Say hello in two steps.", tags: ["greeting"] });
    expect((await call(client, "decide_memory", { ...decided, approve: false })).error).toMatch(/^MEMORY_CONFLICT/);
    expect((await call(client, "list_memories", { team_id: created.id, status: "approved" })).value).toEqual([expect.objectContaining({ id: proposed!.id })]);
    expect((await call(client, "steer", { session_id: created.id, text: "and one more thing" })).value).toMatchObject({ steered: false, queued: true });
    // Routines over MCP: a bad cron is the API's typed refusal; a good one is listed and runs now.
    expect((await call(client, "create_routine", { team_id: created.id, name: "Nightly", prompt: "Check the board", cron: "0 3 * *" })).error).toMatch(/^ROUTINE_INVALID_SCHEDULE/);
    const routine = (await call(client, "create_routine", { team_id: created.id, name: "Nightly", prompt: "Check the board", cron: "0 3 * * *", time_zone: "Europe/Berlin" }))
      .value as { id: string };
    expect((await call(client, "list_routines", { team_id: created.id })).value).toEqual([expect.objectContaining({ id: routine.id, name: "Nightly", schedule: { kind: "cron", cron: "0 3 * * *", timeZone: "Europe/Berlin" } })]);
    expect((await call(client, "run_routine", { team_id: created.id, routine_id: routine.id })).value).toMatchObject({ itemId: expect.any(String) });
    // Bad input is the API's typed refusal, as a tool error.
    expect((await call(client, "prompt", { session_id: created.id, text: "" })).error).toMatch(/^BAD_REQUEST|^INVALID_INPUT/);

    // A stranger's token: the team does not exist for them.
    const stranger = await createTestPerson(db, "Sid");
    const theirs = await connect(app.url, (await createApiToken(db, asUserId(stranger.id), "other")).token);
    expect((await call(theirs, "roster", { team_id: created.id })).error).toMatch(/^SESSION_NOT_FOUND|^TEAM_NOT_FOUND/);
    expect((await call(theirs, "list_teams")).value).toEqual([]);
    // A viewer of the team reads it but cannot act in it, as over tRPC.
    await db.teamPerson.create({ data: { teamId: created.id, userId: stranger.id, role: "viewer" } });
    expect((await call(theirs, "roster", { team_id: created.id })).error).toBeNull();
    expect((await call(theirs, "prompt", { session_id: created.id, text: "let me in" })).error).toMatch(/^FORBIDDEN/);
    expect((await call(theirs, "stop", { session_id: created.id })).error).toMatch(/^FORBIDDEN/);

    // Revoked: refused from the next request on.
    await revokeApiToken(db, asUserId(owner.id), id);
    await expect(client.listTools()).rejects.toThrow(/Unauthorized/);
  });

  it("teams use teams: a team adds this instance's MCP server and prompts another team, never itself", async ({ app, db }) => {
    await setPrivateWebhooksAllowed(db, true);
    const owner = await createTestPerson(db, "Tia");
    const a = await newTestSession(db, "Team A", owner);
    const b = await newTestSession(db, "Team B", owner);
    const { token } = await createApiToken(db, asUserId(owner.id), "team A's agents");
    const by = { person: owner, teamId: a };
    const added = await addMcpServer(db, by, { name: "agents", url: `${app.url}${MCP_PATH}`, bearerToken: token }, KEY);
    expect((await checkMcpServer(db, a, added.id, KEY)).status).toBe("connected");
    // Prompting is not read-only, so it would ask first; this team allows it.
    const catalog = await app.runtime.toolCatalog(a);
    expect(catalog.find((t) => t.name === "mcp__agents__prompt")).toEqual({ name: "mcp__agents__prompt", defaultMode: "ask" });
    await setToolMode(db, by, catalog.map((t) => t.name), "mcp__agents__prompt", "allow");

    const results = (events: SessionEvent[]) => events.flatMap((e) => (e.payload.kind === "tool_result" && e.payload.toolName === "mcp__agents__prompt" ? [e.payload] : []));
    await promptSession(db, a, { text: `/tool mcp__agents__prompt {"session_id":"${b}","text":"Hello from team A"}\n/tool mcp__agents__prompt {"session_id":"${a}","text":"myself"}` });
    const [toB, toSelf] = await waitFor(async () => {
      const r = results(await eventsOf(db, a));
      return r.length === 2 ? r : null;
    }, 30_000, "both calls' results");
    expect(toB).toMatchObject({ isError: false });
    expect(toSelf).toMatchObject({ isError: true, errorCode: "MCP_TOOL_ERROR" });
    expect(JSON.stringify(toSelf!.output)).toContain("MCP_LOOP_REFUSED");
    // Team B's Lead got the prompt as a person's (the token's owner) and answered it.
    await waitFor(
      async () => {
        const evs = await eventsOf(db, b);
        const asked = evs.some((e) => e.payload.kind === "user_message" && e.payload.text.includes("Hello from team A"));
        return asked && evs.some((e) => e.payload.kind === "turn_end") ? true : null;
      },
      30_000,
      "team B's answer",
    );
    expect((await eventsOf(db, a)).some((e) => e.payload.kind === "user_message" && e.payload.text === "myself")).toBe(false);
  });
});
