import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it as plain } from "vitest";
import { z } from "zod";
import { isAppError } from "../errors";
import { setPrivateWebhooksAllowed } from "../people/instance";
import { databaseTest } from "../testing/fixtures";
import { createTestPerson } from "../testing/people";
import { inertRuntime, newTestSession } from "../testing/runtime-harness";
import { decryptSecret, encryptSecret } from "./secrets";
import { addMcpServer, checkMcpServer, listMcpServers } from "./servers";
import { ActivityHub } from "../live/activity";

// A team's MCP servers: secrets encrypted at rest and never given back, and the health check,
// against an MCP server written here with the official SDK that wants a bearer token.

const KEY = randomBytes(32).toString("base64");
const TOKEN = `tok-${randomBytes(8).toString("hex")}`;

let server: http.Server;
let url = "";
beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return void res.writeHead(401).end("no");
    const mcp = new McpServer({ name: "test-tools", version: "1.0.0" });
    mcp.registerTool("echo", { description: "Says it back", inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } }, ({ text }) => ({
      content: [{ type: "text", text }],
    }));
    mcp.registerTool("write", { description: "Writes", inputSchema: { path: z.string() } }, () => ({ content: [{ type: "text", text: "ok" }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => void transport.close());
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("MCP secrets at rest", () => {
  plain("encrypt and decrypt with the key; another key, a changed value or no key are refused", () => {
    const stored = encryptSecret("Bearer abc", KEY);
    expect(stored).not.toContain("abc");
    expect(decryptSecret(stored, KEY)).toBe("Bearer abc");
    expect(encryptSecret("Bearer abc", KEY)).not.toBe(stored);
    expect(isAppError((() => { try { return decryptSecret(stored, randomBytes(32).toString("base64")); } catch (e) { return e; } })(), "MCP_SECRET_UNREADABLE")).toBe(true);
    const parts = stored.split(".");
    const tampered = [...parts.slice(0, 3), Buffer.from("Bearer xyz").toString("base64url")].join(".");
    expect(isAppError((() => { try { return decryptSecret(tampered, KEY); } catch (e) { return e; } })(), "MCP_SECRET_UNREADABLE")).toBe(true);
    expect(isAppError((() => { try { return encryptSecret("x", undefined); } catch (e) { return e; } })(), "MCP_SECRETS_KEY_MISSING")).toBe(true);
  });
});

const it = databaseTest();

describe("a team's MCP servers", () => {
  it("a secret is stored encrypted and never listed; the health check connects and lists the tools", async ({ db, tdb }) => {
    const hub = new ActivityHub(tdb);
    await hub.start();
    await inertRuntime(db, hub);
    try {
      const owner = await createTestPerson(db, "Olive");
      const lead = await newTestSession(db, "With tools", owner);
      const by = { person: owner, teamId: lead };
      await setPrivateWebhooksAllowed(db, true);

      // No key on this server: a secret cannot be stored, and nothing is.
      expect(isAppError(await addMcpServer(db, by, { name: "tools", url, bearerToken: TOKEN }, undefined).catch((e: unknown) => e), "MCP_SECRETS_KEY_MISSING")).toBe(true);
      expect(await db.mcpServer.count()).toBe(0);

      const added = await addMcpServer(db, by, { name: "tools", url, bearerToken: TOKEN }, KEY);
      expect(added).toMatchObject({ name: "tools", url, hasSecret: true, status: "unknown" });
      const row = await db.mcpServer.findUniqueOrThrow({ where: { id: added.id } });
      expect(row.headersEncrypted).not.toContain(TOKEN);
      expect(isAppError(await addMcpServer(db, by, { name: "tools", url }, KEY).catch((e: unknown) => e), "MCP_SERVER_CONFLICT")).toBe(true);

      const checked = await checkMcpServer(db, lead, added.id, KEY);
      expect(checked).toMatchObject({ status: "connected", lastError: null, tools: [{ name: "echo", description: "Says it back" }, { name: "write", description: "Writes" }] });
      // Viewers see the health and the tools, not the URL; nobody sees the secret.
      const asViewer = await listMcpServers(db, lead, { owner: false });
      expect(asViewer[0]).toMatchObject({ url: null, status: "connected", hasSecret: true });
      expect(JSON.stringify([asViewer, await listMcpServers(db, lead, { owner: true })])).not.toContain(TOKEN);

      // A wrong token: failing, with a readable error that names no secret.
      const wrong = await addMcpServer(db, by, { name: "wrong", url, bearerToken: "not-it" }, KEY);
      const failing = await checkMcpServer(db, lead, wrong.id, KEY);
      expect(failing.status).toBe("failing");
      expect(failing.lastError).toMatch(/401/);
      expect(failing.lastError).not.toContain("not-it");
      // A dead one fails too, within the timeout.
      const dead = await addMcpServer(db, by, { name: "dead", url: "http://127.0.0.1:9/mcp" }, KEY);
      expect((await checkMcpServer(db, lead, dead.id, KEY)).status).toBe("failing");
    } finally {
      await hub.close();
    }
  });
});
