import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

// One live MCP client per server per process, made on first use and kept: tool calls reuse it,
// and the server's `notifications/tools/list_changed` reach it (the SDK re-lists the tools and
// hands them to `onTools`, which stores them: the next turn of every member reads the new list).
// A client whose transport closed, or whose configuration changed, is replaced on next use; one
// whose server left its team is ended when a turn of that team next reads its tools.

export const CONNECT_TIMEOUT_MS = 10_000;
/** How long a removed server gets to hear that its session ended before the client just closes. */
const END_SESSION_MS = 2_000;

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

/** Closes a client, ending its Streamable HTTP session first (within a moment) so the server can let go of it too. */
export async function endClient(client: Client): Promise<void> {
  const transport = client.transport;
  if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
    const waited = new Promise((resolve) => setTimeout(resolve, END_SESSION_MS).unref());
    await Promise.race([transport.terminateSession().catch(() => undefined), waited]);
  }
  await client.close();
}

export interface McpEndpoint {
  /** Unique per server: `team:<server id>` or `config:<name>`. */
  key: string;
  /** Changes when the server's configuration does (its cached client is then replaced). */
  fingerprint: string;
  /** Values that must never reach a log, a health row or a transcript (tokens, header values). */
  secrets: readonly string[];
  /** A new transport to the server (checks that must hold at connect time go here). */
  transport(): Promise<Transport>;
}

export interface McpConnectionsOptions {
  /** The server's tools as a connection found them (`connected`), and again on each list_changed. */
  onTools(key: string, tools: Tool[], how: "connected" | "list_changed"): Promise<void>;
  /** A connection failed (health shown in the room); the text is already scrubbed of secrets. */
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

/** `text` with every secret (and a bearer header's bare token) replaced by [secret]. */
export function scrub(text: string, secrets: readonly string[]): string {
  const all = secrets.flatMap((s) => [s, /^Bearer\s+(.+)$/i.exec(s)?.[1] ?? ""]).filter((s) => s.length >= 4);
  // Longest first: a header value contains its bare token.
  return all.sort((a, b) => b.length - a.length).reduce((out, s) => out.split(s).join("[secret]"), text);
}

export class McpConnections {
  private readonly entries = new Map<string, Entry>();
  private closed = false;

  constructor(private readonly opts: McpConnectionsOptions) {}

  /** A connected client for the server (connecting now if needed, within the connect timeout). */
  client(endpoint: McpEndpoint): Promise<LiveClient> {
    if (this.closed) return Promise.reject(new Error("the app is shutting down"));
    const entry = this.entries.get(endpoint.key);
    if (entry && entry.fingerprint === endpoint.fingerprint) return entry.client;
    if (entry) this.drop(endpoint.key);
    const client = this.connect(endpoint);
    const made: Entry = { fingerprint: endpoint.fingerprint, client };
    this.entries.set(endpoint.key, made);
    // A failed connection is not kept: the next call tries again.
    client.catch(() => this.forget(endpoint.key, made));
    return client;
  }

  /**
   * Forgets a server's client and closes it: after a connection error (`failed`: only if that
   * client is still the cached one, so a newer connection another call uses stays).
   */
  drop(key: string, failed?: Client): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    void entry.client.then(
      (c) => {
        if (failed && c.client !== failed) return;
        this.forget(key, entry);
        void c.client.close().catch(() => undefined);
      },
      () => undefined,
    );
  }

  /** A server gone from its team: its client is forgotten and ended (`endClient`). */
  end(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.forget(key, entry);
    void entry.client.then(({ client }) => endClient(client)).catch(() => undefined);
  }

  async closeAll(): Promise<void> {
    this.closed = true;
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(all.map((e) => e.client.then((c) => c.client.close()).catch(() => undefined)));
  }

  private forget(key: string, entry: Entry): void {
    if (this.entries.get(key) === entry) this.entries.delete(key);
  }

  private async connect(endpoint: McpEndpoint): Promise<LiveClient> {
    const { key } = endpoint;
    const log = (line: string) => this.opts.log(`mcp ${key}: ${scrub(line, endpoint.secrets)}`);
    const lost = new AbortController();
    const client: Client = new Client(
      { name: "agent-teams", version: "0.1.0" },
      {
        listChanged: {
          tools: {
            // The SDK re-lists one page; the whole list is read again instead.
            autoRefresh: false,
            onChanged: () => {
              void listAllTools(client)
                .then((tools) => this.opts.onTools(key, tools, "list_changed"))
                .catch((e: unknown) => log(`re-reading tools failed: ${errorText(e)}`));
            },
          },
        },
      },
    );
    const gone = (why: string) => {
      lost.abort(new Error(why));
      const entry = this.entries.get(key);
      if (entry) this.drop(key, client);
    };
    client.onclose = () => gone("the connection closed");
    // A response stream cut off mid-call is retried by the SDK; when every retry failed, calls
    // still waiting on it would wait for their timeout: they end now instead.
    client.onerror = (e) => {
      if (/^Maximum reconnection attempts/.test(e.message)) gone("the connection was lost and could not be resumed");
    };
    const timeoutMs = this.opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const connected = (async () => {
      await client.connect(await endpoint.transport());
      return listAllTools(client);
    })();
    try {
      const tools = await Promise.race([
        connected,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
        }),
      ]);
      await this.opts.onTools(key, tools, "connected");
    } catch (e) {
      // A connection that completes after the timeout is closed then, not left open.
      void connected.then(
        () => client.close(),
        () => client.close(),
      ).catch(() => undefined);
      await this.opts.onFailure(key, scrub(errorText(e), endpoint.secrets)).catch(() => undefined);
      throw e;
    } finally {
      clearTimeout(timer);
    }
    return { client, lost: lost.signal };
  }
}
