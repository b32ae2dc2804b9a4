import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

// One live MCP client per server per process, made on first use and kept: tool calls reuse it,
// and the server's `notifications/tools/list_changed` reach it (the SDK re-lists the tools and
// hands them to `onTools`, which stores them: the next turn of every member reads the new list).
// A client whose transport closed, or whose configuration changed, is replaced on next use.

export const CONNECT_TIMEOUT_MS = 10_000;

/** Every tool a connected client's server offers, page after page. */
export async function listAllTools(client: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor && tools.length < 1_000);
  return tools;
}

export interface McpEndpoint {
  /** Unique per server: `team:<server id>` or `config:<name>`. */
  key: string;
  /** Changes when the server's configuration does (its cached client is then replaced). */
  fingerprint: string;
  /** A new transport to the server (checks that must hold at connect time go here). */
  transport(): Promise<Transport>;
}

export interface McpConnectionsOptions {
  /** The server's tools as a connection found them (`connected`), and again on each list_changed. */
  onTools(key: string, tools: Tool[], how: "connected" | "list_changed"): Promise<void>;
  /** A connection failed (health shown in the room). */
  onFailure(key: string, error: string): Promise<void>;
  connectTimeoutMs?: number;
  log(line: string): void;
}

/** A connected client, and a signal that aborts once its connection is gone for good. */
export interface LiveClient {
  client: Client;
  lost: AbortSignal;
}

interface Entry {
  fingerprint: string;
  client: Promise<LiveClient>;
}

/** The message of an error, with the HTTP status the SDK carries as `code` when it is one. */
export function errorText(e: unknown): string {
  const status = (e as { code?: unknown } | null)?.code;
  const text = e instanceof Error ? e.message : String(e);
  return typeof status === "number" && status >= 100 && status < 600 ? `HTTP ${status}: ${text}` : text;
}

export class McpConnections {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly opts: McpConnectionsOptions) {}

  /** A connected client for the server (connecting now if needed, within the connect timeout). */
  client(endpoint: McpEndpoint): Promise<LiveClient> {
    const entry = this.entries.get(endpoint.key);
    if (entry && entry.fingerprint === endpoint.fingerprint) return entry.client;
    if (entry) void entry.client.then((c) => c.client.close()).catch(() => undefined);
    const client = this.connect(endpoint);
    const made: Entry = { fingerprint: endpoint.fingerprint, client };
    this.entries.set(endpoint.key, made);
    // A failed connection is not kept: the next call tries again.
    client.catch(() => {
      if (this.entries.get(endpoint.key) === made) this.entries.delete(endpoint.key);
    });
    return client;
  }

  /** Forgets a server's client (closed): after a connection error, or when the server is removed. */
  drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    void entry.client.then((c) => c.client.close()).catch(() => undefined);
  }

  async closeAll(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(all.map((e) => e.client.then((c) => c.client.close()).catch(() => undefined)));
  }

  private async connect(endpoint: McpEndpoint): Promise<LiveClient> {
    const { key } = endpoint;
    const client = new Client(
      { name: "agent-teams", version: "0.1.0" },
      {
        listChanged: {
          tools: {
            onChanged: (error, tools) => {
              if (error) return this.opts.log(`mcp ${key}: re-reading tools failed: ${errorText(error)}`);
              void this.opts.onTools(key, tools ?? [], "list_changed").catch((e: unknown) => this.opts.log(`mcp ${key}: storing tools failed: ${errorText(e)}`));
            },
          },
        },
      },
    );
    const timeoutMs = this.opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const connected = (async () => {
        await client.connect(await endpoint.transport());
        return listAllTools(client);
      })();
      const tools = await Promise.race([
        connected,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
        }),
      ]);
      await this.opts.onTools(key, tools, "connected");
    } catch (e) {
      await client.close().catch(() => undefined);
      await this.opts.onFailure(key, errorText(e)).catch(() => undefined);
      throw e;
    } finally {
      clearTimeout(timer);
    }
    const lost = new AbortController();
    const forget = () => {
      const entry = this.entries.get(key);
      if (entry) void entry.client.then((c) => c.client === client && this.entries.get(key) === entry && this.entries.delete(key));
    };
    client.onclose = () => {
      lost.abort(new Error("the connection closed"));
      forget();
    };
    // A response stream cut off mid-call is retried by the SDK; when every retry failed, calls
    // still waiting on it would wait for their timeout: they end now instead.
    client.onerror = (e) => {
      if (!/^Maximum reconnection attempts/.test(e.message)) return;
      lost.abort(new Error("the connection was lost and could not be resumed"));
      forget();
      void client.close().catch(() => undefined);
    };
    return { client, lost: lost.signal };
  }
}
