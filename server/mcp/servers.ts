import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { z } from "zod";
import { inTx, type Db, type DbOrTx } from "../db/client";
import { AppError } from "../errors";
import { newMcpServerId, type SessionId } from "../ids";
import { LIMITS } from "../limits";
import { notifyActivity } from "../live/activity";
import { recordAction, type HumanActor } from "../people/actions";
import { privateWebhooksAllowed } from "../people/instance";
import { lockTeam } from "../team/membership";
import { assertOutboundUrl } from "../team/webhooks";
import { decryptSecret, encryptSecret } from "./secrets";

// A team's MCP servers (SPEC.md §18): owners add a Streamable HTTP endpoint with a bearer token
// or headers (encrypted at rest, never sent back to a browser); anyone in the team sees each
// server's health (connected with its tools, or failing with the error and when it was tried).
// "Test connection" connects with the official SDK's client and lists the tools.

export const MCP_SERVER_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
export const CONNECT_TIMEOUT_MS = 10_000;

export const McpServerInputSchema = z.object({
  name: z.string().regex(MCP_SERVER_NAME, "A name is 1 to 32 lowercase letters, digits, - or _, starting with a letter"),
  url: z.string().trim().min(1).max(LIMITS.webhookUrlChars),
  /** Sent as Authorization: Bearer <token>. */
  bearerToken: z.string().min(1).max(4_000).optional(),
  headers: z.record(z.string().regex(/^[A-Za-z0-9-]{1,64}$/), z.string().max(4_000)).optional(),
});
export type McpServerInput = z.infer<typeof McpServerInputSchema>;

const ToolSummary = z.object({
  name: z.string(),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()),
  annotations: z.record(z.string(), z.unknown()).optional(),
});

export const McpServerViewSchema = z.object({
  id: z.string(),
  name: z.string(),
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
    url: owner ? row.url : null,
    hasSecret: row.headersEncrypted !== null,
    status: row.status,
    tools: z.array(ToolSummary).parse(row.tools).map((t) => ({ name: t.name, description: t.description })),
    lastError: row.lastError,
    checkedAt: row.checkedAt,
  });
}

export async function listMcpServers(db: DbOrTx, teamId: SessionId, opts: { owner: boolean }): Promise<McpServerView[]> {
  const rows = await db.mcpServer.findMany({ where: { teamId }, orderBy: { name: "asc" } });
  return rows.map((r) => viewOf(r, opts.owner));
}

/** An owner adds a server; its secret is encrypted (MCP_SECRETS_KEY_MISSING without a key). */
export async function addMcpServer(db: Db, by: HumanActor, input: McpServerInput, secretsKey: string | undefined): Promise<McpServerView> {
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

/** Connects with the SDK's client and lists the tools, within CONNECT_TIMEOUT_MS; the client is closed after. */
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
        const { tools } = await client.listTools();
        return tools.map((t) => ToolSummary.parse({ name: t.name, description: t.description, inputSchema: t.inputSchema, annotations: t.annotations }));
      })(),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => undefined);
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
  let outcome: { status: "connected"; tools: unknown[]; lastError: null } | { status: "failing"; tools: unknown; lastError: string };
  try {
    outcome = { status: "connected", tools: await listRemoteTools(row.url, headers), lastError: null };
  } catch (e) {
    // The SDK's HTTP errors carry the status as `code`.
    const status = (e as { code?: unknown }).code;
    const text = e instanceof Error ? e.message : String(e);
    const message = typeof status === "number" ? `HTTP ${status}: ${text}` : text;
    // An error text could echo a header back: the secret values never reach the room.
    const clean = Object.values(headers).reduce((text, secret) => text.split(secret).join("[secret]"), message);
    outcome = { status: "failing", tools: row.tools, lastError: clean.slice(0, 500) };
  }
  const updated = await inTx(db, async (tx) => {
    const saved = await tx.mcpServer.update({
      where: { id: serverId },
      data: { status: outcome.status, tools: outcome.tools as object[], lastError: outcome.lastError, checkedAt: new Date() },
    });
    await notifyActivity(tx, teamId, "team");
    return saved;
  });
  return viewOf(updated, true);
}
