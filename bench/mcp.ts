// MCP both ways against a real Postgres and the real app server (one process, keyless model).
// Figures only.
//
//   npm run bench:mcp          (TEST_DATABASE_URL, default postgresql://postgres@127.0.0.1:5432/postgres)
//
// Creates its own database, drops it at the end, prints ONE JSON object on stdout; progress on
// stderr. Knobs: BENCH_MCP_CALLS (tool calls through the team, default 400), BENCH_MCP_READERS
// (concurrent /api/mcp clients, default 8), BENCH_MCP_SECONDS (their run, default 10).
//
// - toolCalls: a local MCP server (the official SDK, Streamable HTTP, answering at once) added
//   to one team; its Lead is prompted with `/tool mcp__fast__lookup` lines, 20 per prompt. Per
//   call, the time between one call's result commit and the next's (intent commit, request,
//   answer, result commit), against the same server's own latency seen by a bare SDK client;
//   calls per second over the whole run.
// - apiReads: BENCH_MCP_READERS SDK clients with a personal API token call `transcript` on a
//   team with a finished keyless scenario for BENCH_MCP_SECONDS; requests per second.
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { createDb } from "../server/db/client";
import { parseEnv } from "../server/env";
import { asUserId } from "../server/ids";
import { startAppServer } from "../server/main";
import { addMcpServer, checkMcpServer } from "../server/mcp/servers";
import { MCP_PATH } from "../server/mcp-server/http";
import { createApiToken } from "../server/people/api-tokens";
import { setPrivateWebhooksAllowed } from "../server/people/instance";
import { promptSession } from "../server/runtime/sessions";
import { createTestPerson } from "../server/testing/people";
import { newTestSession } from "../server/testing/runtime-harness";
import { percentile, progress, round, runBench, serverInfo, waitUntil, withBenchDatabase } from "./support";

const CALLS = Number(process.env.BENCH_MCP_CALLS ?? 400);
const READERS = Number(process.env.BENCH_MCP_READERS ?? 8);
const SECONDS = Number(process.env.BENCH_MCP_SECONDS ?? 10);
const PER_PROMPT = 20;

/** A local MCP server answering at once (stateless Streamable HTTP, JSON answers). */
async function fastServer(): Promise<{ url: string; close: () => void }> {
  const server = http.createServer((req, res) => {
    const mcp = new McpServer({ name: "fast", version: "1.0.0" });
    mcp.registerTool("lookup", { description: "Answers at once", inputSchema: { q: z.string() }, annotations: { readOnlyHint: true } }, ({ q }) => ({
      content: [{ type: "text", text: q }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => void transport.close());
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, close: () => server.close() };
}

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

const stats = (sorted: number[]) => ({ p50Ms: round(percentile(sorted, 50), 2), p99Ms: round(percentile(sorted, 99), 2) });

async function main() {
  await withBenchDatabase("bench_mcp", async (database) => {
    const server = await serverInfo(database.url);
    const key = randomBytes(32).toString("base64");
    const env = parseEnv({ PORT: "0", HOST: "127.0.0.1", SCRIPTED_MODEL_DELAY_MS: "0", MCP_SECRETS_KEY: key, AGENT_IDLE_EVICT_MS: "600000" });
    const app = await startAppServer({ env, database, pages: false, log: () => undefined });
    const db = createDb(database, 4);
    const fast = await fastServer();
    try {
      await setPrivateWebhooksAllowed(db, true);
      const owner = await createTestPerson(db, "Bench owner");

      progress("the server's own latency, from a bare SDK client");
      const bare = await connect(fast.url);
      const own: number[] = [];
      for (let i = 0; i < CALLS; i++) {
        const t0 = performance.now();
        await bare.callTool({ name: "lookup", arguments: { q: String(i) } });
        own.push(performance.now() - t0);
      }
      await bare.close();
      own.sort((a, b) => a - b);

      progress(`${CALLS} calls through one team`);
      const lead = await newTestSession(db, "MCP bench", owner);
      const added = await addMcpServer(db, { person: owner, teamId: lead }, { name: "fast", url: fast.url }, key);
      await checkMcpServer(db, lead, added.id, key);
      const start = performance.now();
      for (let p = 0; p < CALLS / PER_PROMPT; p++) {
        const lines = Array.from({ length: PER_PROMPT }, (_, i) => `/tool mcp__fast__lookup {"q":"${p * PER_PROMPT + i}"}`);
        await promptSession(db, lead, { text: lines.join("\n") });
      }
      await waitUntil(async () => (await db.sessionEvent.count({ where: { sessionId: lead, kind: "tool_result" } })) >= CALLS, 600_000, "every call's result");
      const allMs = performance.now() - start;
      // Per call: the gap from the previous event (the reply or the previous result) to this result.
      const gaps = (
        await db.$queryRaw<{ ms: number }[]>`SELECT ms FROM (
            SELECT kind, extract(epoch FROM (created_at - lag(created_at) OVER (ORDER BY seq))) * 1000 AS ms
            FROM session_events WHERE session_id = ${lead} AND kind IN ('tool_result', 'assistant_message')
          ) g WHERE kind = 'tool_result' AND ms IS NOT NULL`
      )
        .map((r) => Number(r.ms))
        .sort((a, b) => a - b);

      progress(`/api/mcp transcript reads: ${READERS} clients for ${SECONDS} s`);
      const reader = await createTestPerson(db, "Bench reader");
      const team = await newTestSession(db, "Read me", reader);
      await promptSession(db, team, { text: "Plan a small launch" });
      await waitUntil(async () => (await db.sessionEvent.count({ where: { sessionId: team, kind: "turn_end" } })) > 0, 120_000, "the Lead's first answer");
      const { token } = await createApiToken(db, asUserId(reader.id), "bench");
      const clients = await Promise.all(Array.from({ length: READERS }, () => connect(`${app.url}${MCP_PATH}`, { Authorization: `Bearer ${token}` })));
      const readLatencies: number[] = [];
      const until = performance.now() + SECONDS * 1000;
      await Promise.all(
        clients.map(async (c) => {
          while (performance.now() < until) {
            const t0 = performance.now();
            const r = await c.callTool({ name: "transcript", arguments: { session_id: team, limit: 50 } });
            if (r.isError) throw new Error(`transcript refused: ${JSON.stringify(r.content)}`);
            readLatencies.push(performance.now() - t0);
          }
        }),
      );
      await Promise.all(clients.map((c) => c.close()));
      readLatencies.sort((a, b) => a - b);

      const inTeam = stats(gaps);
      const serverOwn = stats(own);
      const result = {
        bench: "mcp",
        at: new Date().toISOString(),
        machine: { cpus: os.cpus().length, loadAverage1m: round(os.loadavg()[0]!, 2), node: process.version, ...server },
        toolCalls: {
          calls: CALLS,
          callsPerSec: round(CALLS / (allMs / 1000)),
          perCallInTeam: inTeam,
          serverOwnLatency: serverOwn,
          overheadP50Ms: round(inTeam.p50Ms - serverOwn.p50Ms, 2),
          overheadP99Ms: round(inTeam.p99Ms - serverOwn.p99Ms, 2),
        },
        apiReads: { clients: READERS, seconds: SECONDS, requests: readLatencies.length, requestsPerSec: round(readLatencies.length / SECONDS), ...stats(readLatencies) },
      };
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    } finally {
      fast.close();
      await db.$disconnect();
      await app.close();
    }
  });
}

runBench(main);
