import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

// A small MCP server written with the official SDK for tests (Streamable HTTP with sessions, so
// `notifications/tools/list_changed` reach connected clients), which a test can make slow,
// failing, huge or cut off mid-call:
//   lookup (read-only)      answers `found <q>`
//   write_note              records its effect (effects[]) and answers `saved`
//   slow                    records its arrival, then waits until the test calls release()
//   huge                    answers 100,000 characters
//   fail                    answers with isError
//   picture                 answers text, an image and an embedded resource
// addTool(name) registers one more read-only tool on every live session (list_changed).

export interface TestMcpServer {
  url: string;
  /** Every call's tool and arguments, in arrival order. */
  calls: { tool: string; args: Record<string, unknown> }[];
  /** write_note's effects (one per call that ran). */
  effects: string[];
  /** Resolves when a `slow` call has arrived (and is held). */
  slowArrived(): Promise<void>;
  /** Lets held `slow` calls answer. */
  release(): void;
  addTool(name: string): void;
  /** Sessions a client opened and has not ended. */
  openSessions(): number;
  /** Drops every connection at once, as a server that died would. */
  cutConnections(): void;
  close(): Promise<void>;
}

/** `token`: every request must carry it as `Authorization: Bearer` (401 otherwise). */
export async function startTestMcpServer(opts: { token?: string } = {}): Promise<TestMcpServer> {
  const calls: TestMcpServer["calls"] = [];
  const effects: string[] = [];
  const sessions = new Map<string, { server: McpServer; transport: StreamableHTTPServerTransport }>();
  const extra: string[] = [];
  let arrived: () => void = () => undefined;
  let arrival = new Promise<void>((resolve) => (arrived = resolve));
  let release: () => void = () => undefined;
  let released = new Promise<void>((resolve) => (release = resolve));

  const registerExtra = (server: McpServer, name: string) =>
    server.registerTool(name, { description: `Added later: ${name}`, annotations: { readOnlyHint: true } }, () => ({ content: [{ type: "text", text: `${name} ok` }] }));

  function build(): McpServer {
    const server = new McpServer({ name: "test-tools", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
    const record = (tool: string, args: Record<string, unknown>) => calls.push({ tool, args });
    server.registerTool("lookup", { description: "Looks a thing up", inputSchema: { q: z.string() }, annotations: { readOnlyHint: true } }, ({ q }) => {
      record("lookup", { q });
      return { content: [{ type: "text", text: `found ${q}` }] };
    });
    server.registerTool("write_note", { description: "Saves a note", inputSchema: { text: z.string().min(1) } }, ({ text }) => {
      record("write_note", { text });
      effects.push(text);
      return { content: [{ type: "text", text: "saved" }] };
    });
    server.registerTool("slow", { description: "Takes its time", inputSchema: { id: z.string() }, annotations: { readOnlyHint: true } }, async ({ id }) => {
      record("slow", { id });
      arrived();
      await released;
      return { content: [{ type: "text", text: `slow ${id} done` }] };
    });
    server.registerTool("huge", { description: "A long answer", annotations: { readOnlyHint: true } }, () => {
      record("huge", {});
      return { content: [{ type: "text", text: "x".repeat(100_000) }] };
    });
    server.registerTool("fail", { description: "Always fails", annotations: { readOnlyHint: true } }, () => {
      record("fail", {});
      return { isError: true, content: [{ type: "text", text: "the thing is broken" }] };
    });
    server.registerTool("picture", { description: "A picture and a file", annotations: { readOnlyHint: true } }, () => {
      record("picture", {});
      return {
        content: [
          { type: "text", text: "Here it is" },
          { type: "image", data: Buffer.alloc(2048).toString("base64"), mimeType: "image/png" },
          { type: "resource", resource: { uri: "file:///notes.txt", mimeType: "text/plain", text: "note body" } },
        ],
      };
    });
    for (const name of extra) registerExtra(server, name);
    return server;
  }

  const httpServer = http.createServer((req, res) => {
    void (async () => {
      if (opts.token && req.headers.authorization !== `Bearer ${opts.token}`) return void res.writeHead(401).end("unauthorized");
      const id = req.headers["mcp-session-id"];
      const known = typeof id === "string" ? sessions.get(id) : undefined;
      if (known) return known.transport.handleRequest(req, res);
      if (req.method !== "POST") return void res.writeHead(400).end("no session");
      const server = build();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (sid) => void sessions.set(sid, { server, transport }),
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await server.connect(transport);
      await transport.handleRequest(req, res);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/mcp`;

  return {
    url,
    calls,
    effects,
    slowArrived: () => arrival,
    release: () => {
      release();
      released = new Promise<void>((resolve) => (release = resolve));
      arrival = new Promise<void>((resolve) => (arrived = resolve));
    },
    addTool(name) {
      extra.push(name);
      // Registering on a connected server sends notifications/tools/list_changed.
      for (const { server } of sessions.values()) registerExtra(server, name);
    },
    openSessions: () => sessions.size,
    cutConnections: () => httpServer.closeAllConnections(),
    async close() {
      release();
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}
