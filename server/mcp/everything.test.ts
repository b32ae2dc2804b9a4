import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect } from "vitest";
import type { SessionId } from "../ids";
import { setPrivateWebhooksAllowed } from "../people/instance";
import type { SessionEvent } from "../runtime/events";
import { promptSession } from "../runtime/sessions";
import { runtimeTest } from "../testing/fixtures";
import { freePort } from "../testing/net";
import { createTestPerson } from "../testing/people";
import { eventsOf, newTestSession, waitFor, waitForTurns, type TestRuntime } from "../testing/runtime-harness";
import { isAppError } from "../errors";
import { addMcpServer, checkMcpServer, listMcpServers, removeMcpServer } from "./servers";

// The reference MCP server (@modelcontextprotocol/server-everything) as a team's server: over
// Streamable HTTP as its own process (killed mid-call in one test), and over stdio as a server
// the instance owner configured (MCP_SERVERS_FILE's shape), offered to every team.

const EVERYTHING = fileURLToPath(new URL("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url));
const KEY = randomBytes(32).toString("base64");
const it = runtimeTest({
  delayMs: 1,
  team: {
    provisioningGraceMs: 5_000,
    mcp: { secretsKey: KEY, configServers: [{ name: "everything", command: process.execPath, args: [EVERYTHING, "stdio"], env: {} }] },
  },
});

const servers: ChildProcess[] = [];
afterAll(() => {
  for (const s of servers) s.kill("SIGKILL");
});

/** server-everything over Streamable HTTP, as its own process; resolves once it listens. */
async function startEverythingHttp(): Promise<{ url: string; proc: ChildProcess }> {
  const port = await freePort();
  const proc = spawn(process.execPath, [EVERYTHING, "streamableHttp"], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
  servers.push(proc);
  await new Promise<void>((resolve, reject) => {
    let err = "";
    proc.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      if (err.includes("listening on port")) resolve();
    });
    proc.once("exit", () => reject(new Error(`server-everything exited: ${err}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, proc };
}

const resultsOf = (events: SessionEvent[], tool: string) =>
  events.flatMap((e) => (e.payload.kind === "tool_result" && e.payload.toolName === tool ? [e.payload] : []));

async function newTeam(rt: TestRuntime, title: string): Promise<{ lead: SessionId; by: { person: Awaited<ReturnType<typeof createTestPerson>>; teamId: SessionId } }> {
  await setPrivateWebhooksAllowed(rt.db, true);
  const owner = await createTestPerson(rt.db, `Eve ${title}`);
  const lead = await newTestSession(rt.db, title, owner);
  return { lead, by: { person: owner, teamId: lead } };
}

describe("server-everything", () => {
  it("over Streamable HTTP: discovered, defaults from annotations, results mapped; killed mid-call → outcome unknown", async ({ rt }) => {
    const { url, proc } = await startEverythingHttp();
    const { lead, by } = await newTeam(rt, "Everything over HTTP");
    const added = await addMcpServer(rt.db, by, { name: "web", url }, KEY);
    const view = await checkMcpServer(rt.db, lead, added.id, KEY);
    expect(view.status).toBe("connected");
    expect(view.tools.map((t) => t.name)).toEqual(expect.arrayContaining(["echo", "get-sum", "get-tiny-image", "trigger-long-running-operation", "toggle-simulated-logging"]));

    const modes = new Map((await rt.runtime.toolCatalog(lead)).map((t) => [t.name, t.defaultMode]));
    expect(modes.get("mcp__web__echo")).toBe("allow");
    expect(modes.get("mcp__web__get-sum")).toBe("allow");
    expect(modes.get("mcp__web__toggle-simulated-logging")).toBe("ask");

    await promptSession(rt.db, lead, { text: '/tool mcp__web__echo {"message":"hi"}\n/tool mcp__web__get-sum {"a":2,"b":3}\n/tool mcp__web__get-tiny-image {}' });
    const events = await waitForTurns(rt.db, lead, 1, 20_000);
    expect(resultsOf(events, "mcp__web__echo")[0]).toMatchObject({ isError: false, output: "Echo: hi" });
    expect(resultsOf(events, "mcp__web__get-sum")[0]!.output).toContain("5");
    expect(resultsOf(events, "mcp__web__get-tiny-image")[0]!.output).toMatch(/\[image image\/png, [\d.]+ kB: not shown, only text reaches the model\]/);

    // A long operation, and the server process killed once the call is on its way.
    await promptSession(rt.db, lead, { text: '/tool mcp__web__trigger-long-running-operation {"duration":30,"steps":3}' });
    await waitFor(async () => ((await rt.db.mcpCall.count({ where: { sessionId: lead, toolName: "trigger-long-running-operation" } })) > 0 ? true : null), 20_000, "the call's intent");
    proc.kill("SIGKILL");
    const after = await waitForTurns(rt.db, lead, 2, 30_000);
    const [cut] = resultsOf(after, "mcp__web__trigger-long-running-operation");
    expect(cut).toMatchObject({ isError: true, errorCode: "MCP_OUTCOME_UNKNOWN" });
    // Told within seconds, not after the call's timeout.
    expect(JSON.stringify(cut!.output)).toMatch(/the connection to web failed during the call \(.+\); the call may or may not have taken effect/);
    expect((await listMcpServers(rt.db, lead, { owner: true })).find((s) => s.name === "web")).toMatchObject({ status: "failing" });
  });

  it("over stdio from the instance's configuration: every team has its tools, health shown, not removable", async ({ rt }) => {
    const { lead, by } = await newTeam(rt, "Everything over stdio");
    await waitFor(async () => ((await rt.runtime.toolCatalog(lead)).some((t) => t.name === "mcp__everything__echo") ? true : null), 30_000, "the configured server's tools");
    const [view] = await listMcpServers(rt.db, lead, { owner: true, configured: ["everything"] });
    expect(view).toMatchObject({ name: "everything", configured: true, status: "connected", url: null });
    // The instance owner's: no team removes it or takes its name.
    expect(isAppError(await removeMcpServer(rt.db, by, view!.id).catch((e: unknown) => e), "MCP_SERVER_NOT_FOUND")).toBe(true);
    const taken = await addMcpServer(rt.db, by, { name: "everything", url: "http://127.0.0.1:9/mcp" }, KEY, ["everything"]).catch((e: unknown) => e);
    expect(isAppError(taken, "MCP_SERVER_CONFLICT")).toBe(true);

    await promptSession(rt.db, lead, { text: '/tool mcp__everything__echo {"message":"over stdio"}' });
    const events = await waitForTurns(rt.db, lead, 1, 20_000);
    expect(resultsOf(events, "mcp__everything__echo")[0]).toMatchObject({ isError: false, output: "Echo: over stdio" });
    expect((await eventsOf(rt.db, lead)).length).toBe(events.length);
  });
});
