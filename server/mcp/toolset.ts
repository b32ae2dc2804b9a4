import { createHash } from "node:crypto";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, ErrorCode, McpError, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { z } from "zod";
import { inTx, type Db } from "../db/client";
import type { SqlRunner } from "../db/sql";
import { AppError } from "../errors";
import type { SessionId } from "../ids";
import { LIMITS } from "../../shared/limits";
import { privateWebhooksAllowed } from "../people/instance";
import type { ToolMode } from "../runtime/approvals";
import { defineTool, type ToolCallScope, type ToolDefinition } from "../runtime/tools";
import { assertOutboundUrl } from "../team/webhooks";
import type { StdioServerConfig } from "./config-file";
import { errorText, McpConnections, scrub, type McpEndpoint } from "./connections";
import { resultText } from "./results";
import { decryptSecret } from "./secrets";
import { recordConfigServerHealth, recordServerHealth, replaceServerTools, ToolSummarySchema, type ToolSummary } from "./servers";

// MCP tools in a team's tool list (SPEC.md §18). Each tool of each of the team's servers (and of
// the instance's configured stdio servers) is `mcp__<server>__<tool>`, read as each turn starts
// from what the last connection listed (the same list for every member), with the JSON schema
// the server gave, validated before the call. Where the team's policy does not name it, a tool
// the server marks read-only is allowed and every other one asks a person first.
//
// Effect once, truth always: the call's intent (key, server, tool, arguments) commits before the
// request goes out. A call whose intent is recorded but whose result never reached the log (a
// crash, a stop, a lost connection, a timeout) is reported as "outcome unknown" and never sent
// again by the runtime; a server that could not be reached is reported as "not run".

export interface McpToolsetOptions {
  secretsKey: string | undefined;
  /** Stdio servers from MCP_SERVERS_FILE, offered to every team. */
  configServers?: readonly StdioServerConfig[];
  /** How long one call may take (LIMITS.mcpCallTimeoutMs). */
  callTimeoutMs?: number;
  connectTimeoutMs?: number;
  log(line: string): void;
}

export interface McpToolset {
  /** The session's team's MCP tools, for this turn (runtime `turnTools`). */
  turnTools(db: SqlRunner, sessionId: SessionId): Promise<ToolDefinition[]>;
  /** An MCP tool no longer listed (its server removed, the tool gone), for recovery only. */
  recoveryTool(name: string): ToolDefinition | undefined;
  /** Connects to the configured stdio servers not connected yet (their tools reach every team). */
  connectConfigServers(): Promise<void>;
  close(): Promise<void>;
}

const ServerRowSchema = z.object({
  id: z.string().nullable(),
  team_id: z.string().nullable(),
  name: z.string(),
  url: z.string().nullable(),
  headers_encrypted: z.string().nullable(),
  tools: z.array(ToolSummarySchema),
});
type ServerRow = z.infer<typeof ServerRowSchema>;
/** A team with no server of its own still has one row: its id, and no name. */
const ServerRows = z.array(ServerRowSchema.extend({ name: z.string().nullable() }));

/** Tool names models accept: letters, digits, _ and -, at most 64. */
function modelToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool.replace(/[^A-Za-z0-9_-]/g, "_")}`.slice(0, 64);
}

/** read-only → allow, anything else → ask (SPEC.md §17 defaults for MCP tools). */
export function defaultModeOf(tool: Pick<ToolSummary, "annotations">): ToolMode {
  return tool.annotations?.readOnlyHint === true ? "allow" : "ask";
}

/**
 * What a call through this instance's own MCP server says about the team making it, so
 * `/api/mcp` can refuse a team calling itself; a hash, so other servers learn no team id.
 */
export function callerTag(teamId: string): string {
  return createHash("sha256").update(`agent-teams caller ${teamId}`).digest("base64url");
}
export const CALLER_HEADER = "agent-teams-caller";

const UNKNOWN_OUTCOME = "the call may or may not have taken effect, and it was not sent again; check its effect before calling it again";

export function createMcpToolset(db: Db, opts: McpToolsetOptions): McpToolset {
  const configs = new Map((opts.configServers ?? []).map((c) => [c.name, c]));
  const connections = new McpConnections({
    log: opts.log,
    connectTimeoutMs: opts.connectTimeoutMs,
    onTools: (key, tools, how) => storeTools(key, tools, how),
    onFailure: (key, error) => storeFailure(key, error),
  });
  const validators = new AjvJsonSchemaValidator();
  /** Per server: its definitions, made again when its tools or configuration change. */
  const made = new Map<string, { version: string; tools: ToolDefinition[] }>();

  const serverKey = (r: Pick<ServerRow, "id" | "name">) => (r.id ? `team:${r.id}` : `config:${r.name}`);
  /** Per team, the team servers this process has made tools for: one no longer listed is let go. */
  const serversOfTeam = new Map<string, Set<string>>();

  /** A connection's list marks the server connected; a list_changed only replaces the tools (it may trail a failure). */
  async function storeTools(key: string, tools: Tool[], how: "connected" | "list_changed"): Promise<void> {
    const summaries = tools.map((t) => ToolSummarySchema.parse({ name: t.name, description: t.description, inputSchema: t.inputSchema, annotations: t.annotations }));
    if (how === "list_changed") {
      if (key.startsWith("team:")) await replaceServerTools(db, key.slice(5), summaries);
      else await db.sql.$executeRaw`UPDATE instance_mcp_servers SET tools = ${JSON.stringify(summaries)}::jsonb WHERE name = ${key.slice(7)}`;
      return;
    }
    const outcome = { status: "connected" as const, tools: summaries, lastError: null };
    if (key.startsWith("team:")) await recordServerHealth(db, key.slice(5), outcome);
    else await recordConfigServerHealth(db, key.slice(7), outcome);
  }

  async function storeFailure(key: string, error: string): Promise<void> {
    const outcome = { status: "failing" as const, lastError: error.slice(0, 500) };
    if (key.startsWith("team:")) await recordServerHealth(db, key.slice(5), outcome);
    else await recordConfigServerHealth(db, key.slice(7), outcome);
  }

  function endpointOf(r: ServerRow, teamId: string): McpEndpoint {
    if (!r.id) {
      const c = configs.get(r.name)!;
      return {
        key: serverKey(r),
        fingerprint: JSON.stringify(c),
        secrets: Object.values(c.env),
        transport: async () =>
          new StdioClientTransport({ command: c.command, args: c.args, env: { ...getDefaultEnvironment(), ...c.env }, cwd: c.cwd, stderr: "ignore" }),
      };
    }
    const headers: Record<string, string> = r.headers_encrypted
      ? z.record(z.string(), z.string()).parse(JSON.parse(decryptSecret(r.headers_encrypted, opts.secretsKey)))
      : {};
    const url = r.url!;
    return {
      key: serverKey(r),
      fingerprint: `${url}\n${r.headers_encrypted ?? ""}`,
      secrets: Object.values(headers),
      transport: async () => {
        // Checked again at connect time: the name may point elsewhere than when it was added.
        const checked = await assertOutboundUrl(url, await privateWebhooksAllowed(db));
        return new StreamableHTTPClientTransport(checked, { requestInit: { headers: { ...headers, [CALLER_HEADER]: callerTag(teamId) } } });
      },
    };
  }

  /** A team server that left the team's list: its definitions are dropped and its client ended. */
  function letGoOfRemoved(teamId: string, rows: ServerRow[]): void {
    const known = serversOfTeam.get(teamId);
    if (!known) return;
    const listed = new Set(rows.map(serverKey));
    for (const key of known) {
      if (listed.has(key)) continue;
      known.delete(key);
      made.delete(`${teamId}\n${key}`);
      connections.end(key);
    }
  }

  function definitionsOf(r: ServerRow, teamId: string): ToolDefinition[] {
    const key = serverKey(r);
    if (r.id) serversOfTeam.set(teamId, (serversOfTeam.get(teamId) ?? new Set()).add(key));
    const version = `${r.url ?? ""}\n${r.headers_encrypted ?? ""}\n${JSON.stringify(r.tools)}`;
    const cached = made.get(`${teamId}\n${key}`);
    if (cached?.version === version) return cached.tools;
    const seen = new Set<string>();
    const tools: ToolDefinition[] = [];
    for (const t of r.tools) {
      const name = modelToolName(r.name, t.name);
      if (seen.has(name)) {
        opts.log(`mcp ${r.name}: tool ${t.name} left out (its name ${name} is taken by another tool of the server)`);
        continue;
      }
      seen.add(name);
      tools.push(toolDefinition(r, teamId, t, name));
    }
    made.set(`${teamId}\n${key}`, { version, tools });
    return tools;
  }

  function toolDefinition(r: ServerRow, teamId: string, t: ToolSummary, name: string): ToolDefinition {
    const schema = { type: "object", ...t.inputSchema } as Record<string, unknown>;
    delete schema.$schema;
    let validate: (v: unknown) => string | null;
    try {
      const check = validators.getValidator(schema as never);
      validate = (v) => {
        const res = check(v);
        return res.valid ? null : (res.errorMessage ?? "does not match the tool's input schema");
      };
    } catch (e) {
      // A schema the validator cannot compile: the server still validates what it receives.
      opts.log(`mcp ${r.name}: the input schema of ${t.name} does not compile (${errorText(e)}); calls go unchecked`);
      validate = () => null;
    }
    return defineTool<Record<string, unknown>, string>({
      name,
      description: `${(t.description ?? t.name).slice(0, 4_000)} (tool ${t.name} of the MCP server ${r.name})`,
      inputJsonSchema: schema,
      input: z.record(z.string(), z.unknown()).superRefine((v, ctx) => {
        const problem = validate(v);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      }),
      output: z.string(),
      defaultMode: defaultModeOf(t),
      async execute(input, ctx) {
        // Sent before by a driver that did not live to record the answer: never sent twice.
        if (await intentOf(ctx, ctx.callKey)) throw unknownOutcome(`this call to ${r.name} was sent before and its answer was lost`);
        const endpoint = endpointOf(r, teamId);
        let live;
        try {
          live = await connections.client(endpoint);
        } catch (e) {
          throw new AppError("MCP_SERVER_UNAVAILABLE", `Not run: the MCP server ${r.name} could not be reached (${scrub(errorText(e), endpoint.secrets)}).`);
        }
        // A stop while connecting: nothing was sent.
        if (ctx.signal.aborted) throw new AppError("INTERRUPTED", "Not run: the turn was stopped before the call was sent.");
        await recordIntent(ctx, r.name, t.name, input);
        const timeoutMs = opts.callTimeoutMs ?? LIMITS.mcpCallTimeoutMs;
        try {
          // The request itself, not callTool: the SDK would check the answer against the tool's
          // output schema and throw after the tool ran, which would read as a refusal.
          const result = await live.client.request({ method: "tools/call", params: { name: t.name, arguments: input } }, CallToolResultSchema, {
            signal: AbortSignal.any([ctx.signal, live.lost]),
            timeout: timeoutMs,
          });
          const text = scrub(resultText({ content: result.content, structuredContent: result.structuredContent }), endpoint.secrets);
          if (result.isError) throw new AppError("MCP_TOOL_ERROR", text || `${t.name} failed`);
          return text;
        } catch (e) {
          if (e instanceof AppError) throw e;
          // A stop: the runtime asks `recover`, which reports the outcome as unknown.
          if (ctx.signal.aborted) throw e;
          const why = scrub(live.lost.aborted ? errorText(live.lost.reason) : errorText(e), endpoint.secrets);
          // The SDK reports any abort as a timeout: a lost connection is told apart first.
          if (!live.lost.aborted && e instanceof McpError && e.code === ErrorCode.RequestTimeout) {
            throw unknownOutcome(`${r.name} did not answer within ${timeoutMs / 1000} s`);
          }
          // The server answered the request with a protocol error (unknown tool, bad arguments).
          if (e instanceof McpError && (e.code === ErrorCode.InvalidParams || e.code === ErrorCode.MethodNotFound)) {
            throw new AppError("MCP_TOOL_ERROR", `${r.name} refused the call: ${why}`);
          }
          // The connection broke during the call: the next call connects again.
          connections.drop(endpoint.key, live.client);
          await storeFailure(endpoint.key, why).catch(() => undefined);
          throw unknownOutcome(`the connection to ${r.name} failed during the call (${why})`);
        }
      },
      recover: (callKey, scope) => recoverMcpCall(scope, callKey),
    });
  }

  /** The servers of the session's team, and the configured ones (with the team's id). */
  async function readServers(sql: SqlRunner, sessionId: string): Promise<{ teamId: string | null; rows: ServerRow[] }> {
    const names = [...configs.keys()];
    const read = ServerRows.parse(
      await sql.$queryRaw`SELECT m.id, s.team_id, m.name, m.url, m.headers_encrypted, COALESCE(m.tools, '[]'::jsonb) AS tools FROM sessions s LEFT JOIN mcp_servers m ON m.team_id = s.team_id WHERE s.id = ${sessionId}
        UNION ALL SELECT NULL, (SELECT team_id FROM sessions WHERE id = ${sessionId}), name, NULL, NULL, tools FROM instance_mcp_servers WHERE name = ANY(${names}::text[])
        ORDER BY name`,
    );
    const rows = read.flatMap((r) => (r.name === null ? [] : [{ ...r, name: r.name }]));
    // A configured server shadows a team's server of the same name.
    const kept = rows.filter((r) => !r.id || !configs.has(r.name));
    return { teamId: read.find((r) => r.team_id)?.team_id ?? null, rows: kept };
  }

  return {
    async turnTools(sql, sessionId) {
      const { teamId, rows } = await readServers(sql, sessionId);
      if (!teamId) return [];
      letGoOfRemoved(teamId, rows);
      return rows.flatMap((r) => definitionsOf(r, teamId));
    },
    recoveryTool(name) {
      if (!name.startsWith("mcp__")) return undefined;
      return defineTool<unknown, string>({
        name,
        description: "An MCP tool no longer offered",
        input: z.unknown(),
        output: z.string(),
        execute: () => Promise.reject(new AppError("TOOL_NOT_FOUND", `No tool named "${name}"`)),
        recover: (callKey, scope) => recoverMcpCall(scope, callKey),
      });
    },
    async connectConfigServers() {
      for (const c of configs.values()) {
        const endpoint = endpointOf({ id: null, team_id: null, name: c.name, url: null, headers_encrypted: null, tools: [] }, "");
        await connections.client(endpoint).catch((e: unknown) => opts.log(`mcp ${c.name}: ${scrub(errorText(e), endpoint.secrets)}`));
      }
    },
    close: () => connections.closeAll(),
  };
}

function unknownOutcome(what: string): AppError {
  return new AppError("MCP_OUTCOME_UNKNOWN", `Outcome unknown: ${what}; ${UNKNOWN_OUTCOME}.`);
}

/** The intent, before the request: fenced by the lease, once per call key. */
async function recordIntent(ctx: ToolCallScope, server: string, tool: string, args: unknown): Promise<void> {
  const fresh = await inTx(ctx.db, async (tx) => {
    await ctx.fence?.(tx);
    return tx.$executeRaw`INSERT INTO mcp_calls (call_key, session_id, server_name, tool_name, arguments)
      VALUES (${ctx.callKey}, ${ctx.sessionId}, ${server}, ${tool}, ${JSON.stringify(args ?? {})}::jsonb)
      ON CONFLICT (call_key) DO NOTHING`;
  });
  if (fresh === 0) throw unknownOutcome(`this call to ${server} was sent before and its answer was lost`);
}

async function intentOf(scope: ToolCallScope, callKey: string): Promise<string | null> {
  const rows = z.array(z.object({ server_name: z.string() })).parse(await scope.db.sql.$queryRaw`SELECT server_name FROM mcp_calls WHERE call_key = ${callKey}`);
  return rows[0]?.server_name ?? null;
}

/**
 * The truth about an MCP call with no result in the log, whether or not its tool is still in the
 * list: sent (its intent is recorded) → outcome unknown, thrown for the model to read; else null.
 */
export async function recoverMcpCall(scope: ToolCallScope, callKey: string): Promise<null> {
  const server = await intentOf(scope, callKey);
  if (server === null) return null;
  throw unknownOutcome(`the call to ${server} was cut off before its answer was recorded`);
}
