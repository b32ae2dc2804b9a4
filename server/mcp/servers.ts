import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { z } from "zod";
import { CONNECT_TIMEOUT_MS, endClient, errorText, listAllTools } from "./connections";
import { inTx, type Db, type DbOrTx } from "../db/client";
import { AppError } from "../errors";
import { newMcpServerId, type SessionId } from "../ids";
import { LIMITS } from "../../shared/limits";
import { notifyActivity } from "../db/notify";
import { recordAction, type HumanActor } from "../people/actions";
import { privateWebhooksAllowed } from "../people/instance";
import { lockTeam } from "../members/membership";
import { assertOutboundUrl } from "../team/webhooks";
import { decryptSecret, encryptSecret } from "./secrets";

// A team's MCP servers (SPEC.md §18): owners add a Streamable HTTP endpoint with a bearer token
// or headers (encrypted at rest, never sent back to a browser); anyone in the team sees each
// server's health (connected with its tools, or failing with the error and when it was tried).
// "Test connection" connects with the official SDK's client and lists the tools.

export const MCP_SERVER_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

export const McpServerInputSchema = z.object({
  name: z.string().regex(MCP_SERVER_NAME, "A name is 1 to 32 lowercase letters, digits, - or _, starting with a letter"),
  url: z.string().trim().min(1).max(LIMITS.webhookUrlChars),
  /** Sent as Authorization: Bearer <token>. */
  bearerToken: z.string().min(1).max(4_000).optional(),
  headers: z.record(z.string().regex(/^[A-Za-z0-9-]{1,64}$/), z.string().max(4_000)).optional(),
});
export type McpServerInput = z.infer<typeof McpServerInputSchema>;

/** A tool as a server listed it (what is stored and what the team's tool list is made of). */
export const ToolSummarySchema = z.object({
  name: z.string(),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()),
  annotations: z.object({ readOnlyHint: z.boolean().optional() }).catchall(z.unknown()).optional(),
});
export type ToolSummary = z.infer<typeof ToolSummarySchema>;
const ToolSummary = ToolSummarySchema;

export const McpServerViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** Configured by the instance owner on the server (a stdio server): offered to every team, not removable here. */
  configured: z.boolean(),
  /** For owners only (it may name an internal host); null for everyone else. */
  url: z.string().nullable(),
  hasSecret: z.boolean(),
  status: z.enum(["unknown", "connected", "failing"]),
  tools: z.array(ToolSummary.pick({ name: true, description: true })),
  lastError: z.string().nullable(),
  checkedAt: z.date().nullable(),
});
export type McpServerView = z.infer<typeof McpServerViewSchema>;

type Row = Awaited<ReturnType<Db["mcpServer"]["findMany"]>>[number];

function viewOf(row: Row, owner: boolean): McpServerView {
  return McpServerViewSchema.parse({
    id: row.id,
    name: row.name,
    configured: false,
    url: owner ? row.url : null,
    hasSecret: row.headersEncrypted !== null,
    status: row.status,
    tools: z.array(ToolSummary).parse(row.tools).map((t) => ({ name: t.name, description: t.description })),
    lastError: row.lastError,
    checkedAt: row.checkedAt,
  });
}

/** The team's servers, and the instance's configured ones (`configured`: names from MCP_SERVERS_FILE). */
export async function listMcpServers(db: DbOrTx, teamId: SessionId, opts: { owner: boolean; configured?: readonly string[] }): Promise<McpServerView[]> {
  const configured = opts.configured ?? [];
  const [rows, instance] = await Promise.all([
    db.mcpServer.findMany({ where: { teamId }, orderBy: { name: "asc" } }),
    configured.length > 0 ? db.instanceMcpServer.findMany({ where: { name: { in: [...configured] } } }) : Promise.resolve([]),
  ]);
  const shown = instance.map((r) =>
    McpServerViewSchema.parse({
      id: `config:${r.name}`,
      name: r.name,
      configured: true,
      url: null,
      hasSecret: false,
      status: r.status,
      tools: z.array(ToolSummary).parse(r.tools).map((t) => ({ name: t.name, description: t.description })),
      lastError: r.lastError,
      checkedAt: r.checkedAt,
    }),
  );
  // A configured server shadows a team's server of the same name (mcp/toolset.ts).
  for (const r of rows) if (!configured.includes(r.name)) shown.push(viewOf(r, opts.owner));
  return shown.sort((a, b) => a.name.localeCompare(b.name));
}

export type HealthOutcome = { status: "connected"; tools: ToolSummary[]; lastError: null } | { status: "failing"; lastError: string; tools?: undefined };

/** What the last connection to a team's server found, shown in the room (announced to it). */
export async function recordServerHealth(db: Db, serverId: string, outcome: HealthOutcome): Promise<void> {
  await inTx(db, async (tx) => {
    const rows = z.array(z.object({ team_id: z.string() })).parse(
      await tx.$queryRaw`UPDATE mcp_servers SET status = ${outcome.status}, last_error = ${outcome.lastError}, checked_at = now(),
          tools = COALESCE(${outcome.tools ? JSON.stringify(outcome.tools) : null}::jsonb, tools)
        WHERE id = ${serverId} RETURNING team_id`,
    );
    if (rows[0]) await notifyActivity(tx, rows[0].team_id, "team");
  });
}

/** A server's new tool list (its list_changed), announced to the room; the health stays. */
export async function replaceServerTools(db: Db, serverId: string, tools: ToolSummary[]): Promise<void> {
  await inTx(db, async (tx) => {
    const rows = z.array(z.object({ team_id: z.string() })).parse(
      await tx.$queryRaw`UPDATE mcp_servers SET tools = ${JSON.stringify(tools)}::jsonb WHERE id = ${serverId} RETURNING team_id`,
    );
    if (rows[0]) await notifyActivity(tx, rows[0].team_id, "team");
  });
}

/** The same for a configured stdio server (one row for the whole instance). */
export async function recordConfigServerHealth(db: Db, name: string, outcome: HealthOutcome): Promise<void> {
  const tools = outcome.tools ? JSON.stringify(outcome.tools) : null;
  await db.sql.$executeRaw`INSERT INTO instance_mcp_servers (name, status, tools, last_error, checked_at)
    VALUES (${name}, ${outcome.status}, COALESCE(${tools}::jsonb, '[]'::jsonb), ${outcome.lastError}, now())
    ON CONFLICT (name) DO UPDATE SET status = EXCLUDED.status, last_error = EXCLUDED.last_error, checked_at = EXCLUDED.checked_at,
      tools = COALESCE(${tools}::jsonb, instance_mcp_servers.tools)`;
}

/** An owner adds a server; its secret is encrypted (MCP_SECRETS_KEY_MISSING without a key). */
export async function addMcpServer(
  db: Db,
  by: HumanActor,
  input: McpServerInput,
  secretsKey: string | undefined,
  /** Names of the instance's configured servers, which no team server may take. */
  reserved: readonly string[] = [],
): Promise<McpServerView> {
  if (reserved.includes(input.name)) throw new AppError("MCP_SERVER_CONFLICT", `${input.name} is the name of a server the instance offers every team`);
  const url = (await assertOutboundUrl(input.url, await privateWebhooksAllowed(db))).toString();
  const headers = { ...input.headers, ...(input.bearerToken ? { Authorization: `Bearer ${input.bearerToken}` } : {}) };
  const headersEncrypted = Object.keys(headers).length > 0 ? encryptSecret(JSON.stringify(headers), secretsKey) : null;
  const row = await inTx(db, async (tx) => {
    await lockTeam(tx, by.teamId);
    const existing = await tx.mcpServer.findMany({ where: { teamId: by.teamId }, select: { name: true } });
    if (existing.some((e) => e.name === input.name)) throw new AppError("MCP_SERVER_CONFLICT", `The team already has an MCP server named ${input.name}`);
    if (existing.length >= LIMITS.mcpServersPerTeam) throw new AppError("MCP_SERVER_CONFLICT", `A team has at most ${LIMITS.mcpServersPerTeam} MCP servers`);
    const made = await tx.mcpServer.create({
      data: { id: newMcpServerId(), teamId: by.teamId, name: input.name, url, headersEncrypted, createdBy: { id: by.person.id, name: by.person.name } },
    });
    await recordAction(tx, by, "mcp_server_added", { detail: { name: input.name, host: new URL(url).host } });
    await notifyActivity(tx, by.teamId, "team");
    return made;
  });
  return viewOf(row, true);
}

export async function removeMcpServer(db: Db, by: HumanActor, serverId: string): Promise<void> {
  await inTx(db, async (tx) => {
    const gone = await tx.mcpServer.findFirst({ where: { id: serverId, teamId: by.teamId }, select: { name: true } });
    if (!gone) throw new AppError("MCP_SERVER_NOT_FOUND", "No such MCP server in this team", { serverId });
    await tx.mcpServer.delete({ where: { id: serverId } });
    await recordAction(tx, by, "mcp_server_removed", { detail: { name: gone.name } });
    await notifyActivity(tx, by.teamId, "team");
  });
}

/** Connects with the SDK's client and lists the tools, within CONNECT_TIMEOUT_MS; the client is ended after (endClient). */
export async function listRemoteTools(url: string, headers: Record<string, string>, timeoutMs = CONNECT_TIMEOUT_MS): Promise<z.infer<typeof ToolSummary>[]> {
  const client = new Client({ name: "agent-teams", version: "0.1.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    return await Promise.race([
      (async () => {
        await client.connect(transport);
        return (await listAllTools(client)).map((t) => ToolSummary.parse({ name: t.name, description: t.description, inputSchema: t.inputSchema, annotations: t.annotations }));
      })(),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
    await endClient(client).catch(() => undefined);
  }
}

/**
 * "Test connection": the server's health, stored and returned — connected with its tools, or
 * failing with the error (readable, never the secret) — and announced to the room.
 */
export async function checkMcpServer(db: Db, teamId: SessionId, serverId: string, secretsKey: string | undefined): Promise<McpServerView> {
  const row = await db.mcpServer.findFirst({ where: { id: serverId, teamId } });
  if (!row) throw new AppError("MCP_SERVER_NOT_FOUND", "No such MCP server in this team", { serverId });
  const headers = row.headersEncrypted ? z.record(z.string(), z.string()).parse(JSON.parse(decryptSecret(row.headersEncrypted, secretsKey))) : {};
  let outcome: HealthOutcome;
  try {
    const url = await assertOutboundUrl(row.url, await privateWebhooksAllowed(db));
    outcome = { status: "connected", tools: await listRemoteTools(url.toString(), headers), lastError: null };
  } catch (e) {
    // An error text could echo a header back: the secret values never reach the room.
    const clean = Object.values(headers).reduce((text, secret) => text.split(secret).join("[secret]"), errorText(e));
    outcome = { status: "failing", lastError: clean.slice(0, 500) };
  }
  await recordServerHealth(db, serverId, outcome);
  return viewOf(await db.mcpServer.findUniqueOrThrow({ where: { id: serverId } }), true);
}
