import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Person } from "../people/person";
import type { TrpcContext } from "../trpc/init";
import { createCaller } from "../trpc/root";
import { z } from "zod";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { buildMcpServer, type LoopGuard } from "./tools";
import { CALLER_HEADER, callerTag } from "../mcp/toolset";

// /api/mcp: the product as an MCP server over Streamable HTTP, stateless (a server and transport
// per request, no MCP session to keep), for the person whose personal API token is the request's
// `Authorization: Bearer`. Without a token that resolves to a person: 401, nothing else runs.

export const MCP_PATH = "/api/mcp";

/**
 * A call made by one of this instance's teams (its tag in CALLER_HEADER, mcp/toolset.ts) may
 * not act on that same team: its agents would be prompting themselves.
 */
function loopGuard(db: Db, header: string | string[] | undefined): LoopGuard {
  const tag = typeof header === "string" ? header : undefined;
  return async (target) => {
    if (!tag) return;
    const teamId =
      "teamId" in target
        ? target.teamId
        : z.array(z.object({ team_id: z.string().nullable() })).parse(await db.sql.$queryRaw`SELECT team_id FROM sessions WHERE id = ${target.sessionId}`)[0]?.team_id;
    if (teamId && callerTag(teamId) === tag) throw new AppError("MCP_LOOP_REFUSED", "A team cannot drive itself through this MCP server: that would be a loop. Work with your own team through your team tools.");
  };
}
const VERSION = "0.1.0";

function jsonRpcError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "Content-Type": "application/json", "Cache-Control": "no-store", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message }, id: null }));
}

/** Serves one MCP request; `person` is the bearer token's (null: none, or not a live token). */
export async function serveMcp(req: IncomingMessage, res: ServerResponse, ctx: Omit<TrpcContext, "person">, person: Person | null): Promise<void> {
  const bearer = /^Bearer\s+\S/i.test(req.headers.authorization ?? "");
  if (!bearer || !person) {
    return jsonRpcError(res, 401, "Unauthorized: send a personal API token (Account page) as Authorization: Bearer <token>", {
      "WWW-Authenticate": 'Bearer realm="agent-teams"',
    });
  }
  if (req.method !== "POST") return jsonRpcError(res, 405, "This MCP server is stateless: POST JSON-RPC messages", { Allow: "POST" });
  const server = buildMcpServer(createCaller({ ...ctx, person }), VERSION, loopGuard(ctx.db, req.headers[CALLER_HEADER]));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res);
}
