import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect } from "vitest";
import type { SessionId } from "../ids";
import { LIMITS } from "../../shared/limits";
import type { Person } from "../people/person";
import { setPrivateWebhooksAllowed } from "../people/instance";
import type { SessionEvent } from "../runtime/events";
import { promptSession } from "../runtime/sessions";
import { decideApproval, pendingRequests } from "../team/approvals";
import { runtimeTest } from "../testing/fixtures";
import { startTestMcpServer, type TestMcpServer } from "../testing/mcp-test-server";
import { createTestPerson } from "../testing/people";
import { eventsOf, newTestSession, waitFor, waitForTurns, type TestRuntime } from "../testing/runtime-harness";
import { addMcpServer, checkMcpServer, listMcpServers, removeMcpServer } from "./servers";
import { stopAs } from "../team/person-actions";

// A team's MCP tools through the real runtime and the keyless model (`/tool` lines), against an
// MCP server written with the SDK that can be made slow, failing, huge or cut off: discovery and
// naming, policy defaults from annotations, schema validation before the call, approvals,
// result mapping and size cuts, timeouts and lost connections as "outcome unknown" (never sent
// twice), list_changed, and the server's secret nowhere but in the request.

const KEY = randomBytes(32).toString("base64");
const TOKEN = `secret-${randomBytes(8).toString("hex")}`;
const CALL_TIMEOUT_MS = 1_500;
const it = runtimeTest({ team: { provisioningGraceMs: 5_000, mcp: { secretsKey: KEY, callTimeoutMs: CALL_TIMEOUT_MS } }, delayMs: 1 });

let tools: TestMcpServer;
beforeAll(async () => {
  tools = await startTestMcpServer({ token: TOKEN });
});
afterAll(async () => {
  await tools.close();
});

type Team = { lead: SessionId; by: { person: Person; teamId: SessionId } };

async function teamWithServer(rt: TestRuntime, title: string, url = tools.url): Promise<Team & { serverId: string }> {
  await setPrivateWebhooksAllowed(rt.db, true);
  const owner = await createTestPerson(rt.db, `Olive ${title}`);
  const lead = await newTestSession(rt.db, title, owner);
  const by = { person: owner, teamId: lead };
  const added = await addMcpServer(rt.db, by, { name: "tools", url, bearerToken: TOKEN }, KEY);
  const checked = await checkMcpServer(rt.db, lead, added.id, KEY);
  expect(checked.status).toBe("connected");
  return { lead, by, serverId: added.id };
}

const resultsOf = (events: SessionEvent[], tool: string) =>
  events.flatMap((e) => (e.payload.kind === "tool_result" && e.payload.toolName === tool ? [e.payload] : []));

async function call(rt: TestRuntime, lead: SessionId, line: string, turns: number): Promise<SessionEvent[]> {
  await promptSession(rt.db, lead, { text: line });
  return waitForTurns(rt.db, lead, turns, 20_000);
}

describe("MCP tools in a team", () => {
  it("are named mcp__<server>__<tool>, with read-only tools allowed and the rest asking", async ({ rt }) => {
    const { lead } = await teamWithServer(rt, "Catalog");
    const catalog = await rt.runtime.toolCatalog(lead);
    const mcp = catalog.filter((t) => t.name.startsWith("mcp__"));
    expect(mcp).toEqual(
      expect.arrayContaining([
        { name: "mcp__tools__lookup", defaultMode: "allow" },
        { name: "mcp__tools__write_note", defaultMode: "ask" },
        { name: "mcp__tools__huge", defaultMode: "allow" },
      ]),
    );
    // The built-in tools come first, unchanged.
    expect(catalog[0]!.name).toBe(rt.runtime.toolNames()[0]);
  });

  it("a read-only tool runs at once; the result is what the server said, and the intent was recorded", async ({ rt }) => {
    const { lead } = await teamWithServer(rt, "Lookup");
    const before = tools.calls.length;
    const events = await call(rt, lead, '/tool mcp__tools__lookup {"q":"cats"}', 1);
    expect(resultsOf(events, "mcp__tools__lookup")).toEqual([expect.objectContaining({ isError: false, output: "found cats" })]);
    expect(tools.calls.slice(before)).toEqual([{ tool: "lookup", args: { q: "cats" } }]);
    const intents = await rt.db.mcpCall.findMany({ where: { sessionId: lead } });
    expect(intents).toMatchObject([{ serverName: "tools", toolName: "lookup", arguments: { q: "cats" } }]);
  });

  it("arguments that break the tool's JSON schema are refused before any request", async ({ rt }) => {
    const { lead } = await teamWithServer(rt, "Schema");
    const before = tools.calls.length;
    const events = await call(rt, lead, '/tool mcp__tools__lookup {"q":5}', 1);
    const [result] = resultsOf(events, "mcp__tools__lookup");
    expect(result).toMatchObject({ isError: true });
    expect(JSON.stringify(result!.output)).toContain("Invalid arguments for mcp__tools__lookup");
    expect(tools.calls.length).toBe(before);
    expect(await rt.db.mcpCall.count({ where: { sessionId: lead } })).toBe(0);
  });

  it("a tool that is not read-only waits for approval, then runs exactly once", async ({ rt }) => {
    const { lead, by } = await teamWithServer(rt, "Approve");
    const effects = tools.effects.length;
    await promptSession(rt.db, lead, { text: '/tool mcp__tools__write_note {"text":"hello"}' });
    const [waiting] = await waitFor(async () => {
      const list = await pendingRequests(rt.db.sql, lead);
      return list.length > 0 ? list : null;
    }, 20_000, "the approval request");
    expect(waiting).toMatchObject({ kind: "approval", toolName: "mcp__tools__write_note", arguments: { text: "hello" } });
    expect(tools.effects.length).toBe(effects);
    await decideApproval(rt.db, by, waiting!.id, { approve: true, note: null, alwaysAllow: false });
    const events = await waitForTurns(rt.db, lead, 1, 20_000);
    expect(resultsOf(events, "mcp__tools__write_note")).toEqual([expect.objectContaining({ isError: false, output: "saved" })]);
    expect(tools.effects.slice(effects)).toEqual(["hello"]);
  });

  it("maps errors, images and resources to text, and cuts a huge result with a note", async ({ rt }) => {
    const { lead } = await teamWithServer(rt, "Results");
    const events = await call(rt, lead, "/tool mcp__tools__fail {}\n/tool mcp__tools__huge {}\n/tool mcp__tools__picture {}", 1);
    expect(resultsOf(events, "mcp__tools__fail")).toEqual([
      expect.objectContaining({ isError: true, errorCode: "MCP_TOOL_ERROR", output: { error: { code: "MCP_TOOL_ERROR", message: "the thing is broken" } } }),
    ]);
    const huge = resultsOf(events, "mcp__tools__huge")[0]!.output as string;
    expect(huge.startsWith("x".repeat(LIMITS.mcpResultChars))).toBe(true);
    expect(huge).toContain(`[cut: the result was 100000 characters; only the first ${LIMITS.mcpResultChars} are shown]`);
    expect(huge.length).toBeLessThan(LIMITS.mcpResultChars + 200);
    expect(resultsOf(events, "mcp__tools__picture")[0]!.output).toBe(
      "Here it is\n[image image/png, 2.0 kB: not shown, only text reaches the model]\n[resource file:///notes.txt text/plain]\nnote body",
    );
  });

  it("a call with no answer in time ends as outcome unknown and is not sent again", async ({ rt }) => {
    const { lead } = await teamWithServer(rt, "Timeout");
    const sent = () => tools.calls.filter((c) => c.tool === "slow" && c.args.id === "t1").length;
    const events = await call(rt, lead, '/tool mcp__tools__slow {"id":"t1"}', 1);
    tools.release();
    const [result] = resultsOf(events, "mcp__tools__slow");
    expect(result).toMatchObject({ isError: true, errorCode: "MCP_OUTCOME_UNKNOWN" });
    expect(JSON.stringify(result!.output)).toContain(`did not answer within ${CALL_TIMEOUT_MS / 1000} s; the call may or may not have taken effect`);
    expect(sent()).toBe(1);
    expect(events.at(-1)!.payload).toMatchObject({ kind: "turn_end", reason: "completed" });
  });

  it("a connection lost mid-call is outcome unknown; the server shows failing, and the next call connects again", async ({ rt }) => {
    const { lead, serverId } = await teamWithServer(rt, "Cut");
    await promptSession(rt.db, lead, { text: '/tool mcp__tools__slow {"id":"cut"}' });
    await tools.slowArrived();
    tools.cutConnections();
    const events = await waitForTurns(rt.db, lead, 1, 20_000);
    tools.release();
    const [result] = resultsOf(events, "mcp__tools__slow");
    expect(result).toMatchObject({ isError: true, errorCode: "MCP_OUTCOME_UNKNOWN" });
    expect(JSON.stringify(result!.output)).toContain("may or may not have taken effect");
    const [view] = await listMcpServers(rt.db, lead, { owner: true });
    expect(view).toMatchObject({ id: serverId, status: "failing" });

    const again = await call(rt, lead, '/tool mcp__tools__lookup {"q":"after"}', 2);
    expect(resultsOf(again, "mcp__tools__lookup")).toEqual([expect.objectContaining({ isError: false, output: "found after" })]);
    await waitFor(async () => ((await listMcpServers(rt.db, lead, { owner: true }))[0]!.status === "connected" ? true : null), 10_000, "connected again");
  });

  it("a stop during a call reports the outcome as unknown", async ({ rt }) => {
    const { lead, by } = await teamWithServer(rt, "Stop");
    await promptSession(rt.db, lead, { text: '/tool mcp__tools__slow {"id":"stop"}' });
    await tools.slowArrived();
    await stopAs(rt.db, lead, by);
    const events = await waitForTurns(rt.db, lead, 1, 20_000);
    tools.release();
    expect(resultsOf(events, "mcp__tools__slow")).toEqual([expect.objectContaining({ isError: true, errorCode: "MCP_OUTCOME_UNKNOWN" })]);
    expect(events.at(-1)!.payload).toMatchObject({ kind: "turn_end", reason: "aborted" });
  });

  it("an unreachable server's tools answer 'not run', and nothing is recorded as sent", async ({ rt }) => {
    const gone = await startTestMcpServer({ token: TOKEN });
    const { lead } = await teamWithServer(rt, "Gone", gone.url);
    await gone.close();
    const events = await call(rt, lead, '/tool mcp__tools__lookup {"q":"x"}', 1);
    const [result] = resultsOf(events, "mcp__tools__lookup");
    expect(result).toMatchObject({ isError: true, errorCode: "MCP_SERVER_UNAVAILABLE" });
    expect(JSON.stringify(result!.output)).toContain("Not run: the MCP server tools could not be reached");
    expect(await rt.db.mcpCall.count({ where: { sessionId: lead } })).toBe(0);
    expect((await listMcpServers(rt.db, lead, { owner: true }))[0]).toMatchObject({ status: "failing" });
  });

  it("tools/list_changed: a tool the server adds reaches the team's list", async ({ rt }) => {
    const { lead } = await teamWithServer(rt, "Changed");
    // A call opens the live connection the notification comes through.
    await call(rt, lead, '/tool mcp__tools__lookup {"q":"x"}', 1);
    tools.addTool("fresh_tool");
    await waitFor(async () => ((await rt.runtime.toolCatalog(lead)).some((t) => t.name === "mcp__tools__fresh_tool") ? true : null), 10_000, "the new tool listed");
    const events = await call(rt, lead, "/tool mcp__tools__fresh_tool {}", 2);
    expect(resultsOf(events, "mcp__tools__fresh_tool")).toEqual([expect.objectContaining({ isError: false, output: "fresh_tool ok" })]);
  });

  it("a server removed from the team: the team's next turn ends its session and its tools are gone", async ({ rt }) => {
    const own = await startTestMcpServer({ token: TOKEN });
    try {
      const { lead, by, serverId } = await teamWithServer(rt, "Removed", own.url);
      await call(rt, lead, '/tool mcp__tools__lookup {"q":"r"}', 1);
      // The check ended its own session; the call's stays open for the next calls.
      expect(own.openSessions()).toBe(1);
      await removeMcpServer(rt.db, by, serverId);
      const events = await call(rt, lead, '/tool mcp__tools__lookup {"q":"again"}', 2);
      expect(resultsOf(events, "mcp__tools__lookup").at(-1)).toMatchObject({ isError: true, errorCode: "TOOL_NOT_FOUND" });
      await waitFor(() => (own.openSessions() === 0 ? true : null), 5_000, "the removed server's session ended");
      expect(own.calls).toEqual([{ tool: "lookup", args: { q: "r" } }]);
    } finally {
      await own.close();
    }
  });

  it("the server's token is in no event, view or log line", async ({ rt }) => {
    const { lead } = await teamWithServer(rt, "Secret");
    await call(rt, lead, '/tool mcp__tools__lookup {"q":"s"}\n/tool mcp__tools__fail {}', 1);
    const everything = JSON.stringify([await eventsOf(rt.db, lead), await listMcpServers(rt.db, lead, { owner: true }), rt.logs]);
    expect(everything).toContain("found s");
    expect(everything).not.toContain(TOKEN);
  });
});
