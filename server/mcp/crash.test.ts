import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setPrivateWebhooksAllowed } from "../people/instance";
import type { SessionEvent } from "../runtime/events";
import { promptSession } from "../runtime/sessions";
import { startTestMcpServer, type TestMcpServer } from "../testing/mcp-test-server";
import { createTestPerson } from "../testing/people";
import { childProcessDatabase, spawnRuntime } from "../testing/runtime-child";
import { eventsOf, newTestSession, waitFor } from "../testing/runtime-harness";
import { addMcpServer, checkMcpServer, removeMcpServer } from "./servers";

// An MCP call cut off by a crash: a real runtime process is SIGKILLed while the MCP server holds
// the call (its intent committed, the request received, no answer yet), and the server is
// removed before the next process starts. That process closes the turn with "outcome unknown" as
// the call's result (from the call's record, though its tool is gone), and nothing sends it again.

const t = childProcessDatabase();
const KEY = randomBytes(32).toString("base64");
const CHILD_ENV = { RUNTIME_TEAM: "1", SCRIPTED_MODEL_DELAY_MS: "0", AGENT_LEASE_TTL_MS: "1000", RUNTIME_RECOVERY_INTERVAL_MS: "200", MCP_SECRETS_KEY: KEY };

let tools: TestMcpServer;
beforeAll(async () => {
  tools = await startTestMcpServer();
});
afterAll(async () => {
  await tools.close();
});

describe("an MCP call across a crash", () => {
  it("killed mid-call: the next process reports the outcome as unknown and never sends it again", { timeout: 120_000 }, async () => {
    await setPrivateWebhooksAllowed(t.db, true);
    const owner = await createTestPerson(t.db, "Cora Crash");
    const lead = await newTestSession(t.db, "mcp-crash", owner);
    const added = await addMcpServer(t.db, { person: owner, teamId: lead }, { name: "tools", url: tools.url }, KEY);
    expect((await checkMcpServer(t.db, lead, added.id, KEY)).status).toBe("connected");

    const first = await spawnRuntime(t, CHILD_ENV);
    await promptSession(t.db, lead, { text: '/tool mcp__tools__slow {"id":"crash"}' });
    // The window: the intent is committed and the server holds the request.
    await tools.slowArrived();
    expect(await t.db.mcpCall.count({ where: { sessionId: lead } })).toBe(1);
    await first.kill("SIGKILL");
    // The server finishes the call; its answer has nobody to reach.
    tools.release();
    // And the owner removes the server meanwhile: the call's own record still tells the truth.
    await removeMcpServer(t.db, { person: owner, teamId: lead }, added.id);

    await spawnRuntime(t, CHILD_ENV);
    const events = await waitFor(
      async () => {
        const evs = await eventsOf(t.db, lead);
        return evs.some((e) => e.payload.kind === "turn_end") ? evs : null;
      },
      60_000,
      "the cut turn to close",
    );
    const results = events.flatMap((e: SessionEvent) => (e.payload.kind === "tool_result" ? [e.payload] : []));
    expect(results).toEqual([expect.objectContaining({ toolName: "mcp__tools__slow", isError: true, errorCode: "MCP_OUTCOME_UNKNOWN" })]);
    expect(JSON.stringify(results[0]!.output)).toContain("the call may or may not have taken effect, and it was not sent again");
    expect(events.find((e) => e.payload.kind === "turn_end")!.payload).toMatchObject({ reason: "interrupted" });
    // The resumed agent carries on (the resume notice), and the call reached the server once.
    await waitFor(async () => ((await eventsOf(t.db, lead)).filter((e) => e.payload.kind === "turn_end").length >= 2 ? true : null), 60_000, "the resumed turn");
    expect(tools.calls.filter((c) => c.tool === "slow")).toEqual([{ tool: "slow", args: { id: "crash" } }]);
  });
});
