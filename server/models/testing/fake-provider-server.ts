// A scripted stand-in for real model providers, speaking both streaming wire formats the app
// uses: OpenAI chat completions (POST /v1/chat/completions) and Anthropic Messages
// (POST /v1/messages). Unit tests and end-to-end runs point the real SDK clients at it, so what
// is exercised is the actual HTTP + SSE path, never a mocked SDK.

import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach } from "vitest";

export interface FakeToolCall {
  id: string;
  name: string;
  /** Sent verbatim, split across several deltas; may be malformed JSON on purpose. */
  argumentsJson: string;
}

export interface FakeUsage {
  inputTokens: number;
  outputTokens: number;
  /** Part of inputTokens served from the prompt cache (OpenAI `cached_tokens`, Anthropic `cache_read_input_tokens`). */
  cachedInputTokens?: number;
}

/** One scripted response; consumed by the next request to either endpoint. */
export type FakeScript =
  | {
      /** Streamed in order, one SSE event per piece. */
      text?: string[];
      toolCalls?: FakeToolCall[];
      usage?: FakeUsage;
      /** Pause before each SSE event, so tests can abort mid-stream. */
      delayMs?: number;
      /** After the content, emit an in-stream error event instead of finishing normally. */
      streamError?: string;
      /** After the content, drop the connection (no error event, no end): a stream cut mid-reply. */
      cut?: boolean;
      /**
       * The response starts (status and headers) but no event is sent until this settles: a
       * slow first token, or a provider the test releases request by request.
       */
      hold?: PromiseLike<unknown>;
      /** After the content, before the end (or the cut), nothing more is sent until this settles. */
      stall?: PromiseLike<unknown>;
      /** Anthropic: every usage figure in the final message_delta, none in message_start. */
      usageAtEnd?: boolean;
      /** How many deltas each tool call's arguments are split into (default 3). */
      argumentChunks?: number;
    }
  | {
      /**
       * Reply with this HTTP status and a provider-shaped JSON error body; no stream. `{key}`
       * in the message becomes the API key the request carried (as real providers echo it).
       */
      status: number;
      message: string;
      /** Extra response headers (e.g. Retry-After). */
      headers?: Record<string, string>;
    };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body (undefined when the body was not JSON). */
  body: unknown;
  /** True once the client closed the connection before the scripted response was complete. */
  disconnectedEarly: boolean;
}

export interface FakeProviderServer {
  /** e.g. http://127.0.0.1:54321 */
  url: string;
  /** `${url}/v1`: the baseURL both SDK clients expect. */
  baseURL: string;
  requests: RecordedRequest[];
  /** Requests whose response has not finished (or been dropped) yet, and the most seen at once since the last reset. */
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** Resolves once `n` requests have arrived since the last reset. */
  waitForRequests(n: number): Promise<void>;
  enqueue(...scripts: FakeScript[]): void;
  /** Drops recorded requests and any unconsumed scripts. */
  reset(): void;
  close(): Promise<void>;
}

type Wire = "openai" | "anthropic";

export async function startFakeProviderServer(): Promise<FakeProviderServer> {
  const queue: FakeScript[] = [];
  const requests: RecordedRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let arrivals: (() => void)[] = [];

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const record: RecordedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: parseJson(raw),
        disconnectedEarly: false,
      };
      requests.push(record);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      for (const arrived of arrivals) arrived();
      res.on("close", () => {
        inFlight -= 1;
        if (!res.writableFinished) record.disconnectedEarly = true;
      });

      const wire = wireFor(req.method, req.url);
      if (wire === undefined) {
        sendJson(res, 404, { error: { message: `fake provider: no route ${req.method} ${req.url}` } });
        return;
      }
      const script = queue.shift();
      if (script === undefined) {
        // Loud on purpose: an unscripted call is a test bug, not a model answer.
        sendError(res, wire, 500, "fake provider: no scripted response left");
        return;
      }
      if ("status" in script) {
        const key = String(req.headers["x-api-key"] ?? req.headers.authorization ?? "").replace(/^Bearer\s+/i, "");
        sendError(res, wire, script.status, script.message.replaceAll("{key}", key), script.headers);
        return;
      }
      const events =
        wire === "openai" ? openAIEvents(script, record.body) : anthropicEvents(script, record.body);
      void streamEvents(res, events, script);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    baseURL: `${url}/v1`,
    requests,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    waitForRequests: (n) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (requests.length < n) return;
          arrivals = arrivals.filter((a) => a !== check);
          resolve();
        };
        arrivals.push(check);
        check();
      }),
    enqueue: (...scripts) => void queue.push(...scripts),
    reset: () => {
      queue.length = 0;
      requests.length = 0;
      maxInFlight = inFlight;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        // Streams an aborted test left open must not keep close() waiting.
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

function wireFor(method: string | undefined, url: string | undefined): Wire | undefined {
  if (method !== "POST") return undefined;
  const path = (url ?? "").split("?")[0];
  if (path === "/v1/chat/completions") return "openai";
  if (path === "/v1/messages") return "anthropic";
  return undefined;
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

function field(body: unknown, key: string): unknown {
  return typeof body === "object" && body !== null ? (body as Record<string, unknown>)[key] : undefined;
}

function sendJson(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(payload));
}

function sendError(res: ServerResponse, wire: Wire, status: number, message: string, headers?: Record<string, string>): void {
  if (wire === "openai") {
    sendJson(res, status, { error: { message, type: "fake_error", code: status } }, headers);
  } else {
    const type = status === 401 ? "authentication_error" : "api_error";
    sendJson(res, status, { type: "error", error: { type, message } }, headers);
  }
}

/** One SSE event: an optional `event:` name (Anthropic uses them) and a data payload. */
interface SseEvent {
  event?: string;
  data: string;
}

/** The events, and the index of the first one after the content (where `stall` waits). */
type ScriptedEvents = SseEvent[] & { contentEnd?: number };

async function streamEvents(res: ServerResponse, events: ScriptedEvents, script: StreamScript): Promise<void> {
  const delayMs = script.delayMs ?? 0;
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  // Push headers out now so the client sees the response start even when the first event is delayed.
  res.flushHeaders();
  let clientGone = false;
  res.once("close", () => (clientGone = true));
  if (script.hold) await script.hold;
  const stallAt = events.contentEnd ?? events.length;
  for (const [i, e] of events.entries()) {
    if (i === stallAt && script.stall) await script.stall;
    if (delayMs > 0) await sleep(delayMs);
    if (clientGone) return; // client went away (abort): stop producing
    res.write(`${e.event ? `event: ${e.event}\n` : ""}data: ${e.data}\n\n`);
  }
  if (stallAt === events.length && script.stall) await script.stall;
  if (script.cut) {
    // Let the written events reach the client first, then drop the socket without ending the response.
    await new Promise<void>((resolve) => res.write("", () => resolve()));
    res.socket?.destroy();
    return;
  }
  res.end();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Splits into up to `parts` non-empty pieces, so arguments really arrive in fragments. */
function splitInto(s: string, parts: number): string[] {
  if (s.length === 0) return [""];
  const size = Math.ceil(s.length / parts);
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

type StreamScript = Exclude<FakeScript, { status: number }>;

function openAIEvents(script: StreamScript, body: unknown): ScriptedEvents {
  const model = typeof field(body, "model") === "string" ? (field(body, "model") as string) : "fake";
  const base = { id: "chatcmpl-fake", object: "chat.completion.chunk", created: 1_700_000_000, model };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): SseEvent => ({
    data: JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finishReason }] }),
  });

  const events: ScriptedEvents = [chunk({ role: "assistant", content: "" })];
  for (const t of script.text ?? []) events.push(chunk({ content: t }));
  (script.toolCalls ?? []).forEach((call, index) => {
    splitInto(call.argumentsJson, script.argumentChunks ?? 3).forEach((args, i) => {
      // Only the first fragment carries id and name, as OpenAI does.
      const toolCall =
        i === 0
          ? { index, id: call.id, type: "function", function: { name: call.name, arguments: args } }
          : { index, function: { arguments: args } };
      events.push(chunk({ tool_calls: [toolCall] }));
    });
  });

  if (script.streamError !== undefined) {
    events.push({ data: JSON.stringify({ error: { message: script.streamError, type: "fake_error" } }) });
    return events;
  }
  events.contentEnd = events.length;
  if (script.cut) return events;
  const hasTools = (script.toolCalls ?? []).length > 0;
  events.push(chunk({}, hasTools ? "tool_calls" : "stop"));
  const includeUsage = field(field(body, "stream_options"), "include_usage") === true;
  if (includeUsage && script.usage) {
    // Real OpenAI sends usage in its own trailing chunk with empty choices.
    const { inputTokens, outputTokens, cachedInputTokens } = script.usage;
    events.push({
      data: JSON.stringify({
        ...base,
        choices: [],
        usage: {
          prompt_tokens: inputTokens,
          completion_tokens: outputTokens,
          total_tokens: inputTokens + outputTokens,
          ...(cachedInputTokens !== undefined ? { prompt_tokens_details: { cached_tokens: cachedInputTokens } } : {}),
        },
      }),
    });
  }
  events.push({ data: "[DONE]" });
  return events;
}

function anthropicEvents(script: StreamScript, body: unknown): ScriptedEvents {
  const model = typeof field(body, "model") === "string" ? (field(body, "model") as string) : "fake";
  const ev = (payload: { type: string } & Record<string, unknown>): SseEvent => ({
    event: payload.type,
    data: JSON.stringify(payload),
  });
  const usage = script.usage ?? { inputTokens: 0, outputTokens: 0 };
  // Anthropic counts cache reads apart from input_tokens; FakeUsage's inputTokens includes them.
  const cached = usage.cachedInputTokens ?? 0;
  const inputUsage = { input_tokens: usage.inputTokens - cached, ...(cached > 0 ? { cache_read_input_tokens: cached } : {}) };

  const events: ScriptedEvents = [
    ev({
      type: "message_start",
      message: {
        id: "msg_fake",
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: script.usageAtEnd ? { input_tokens: 0, output_tokens: 0 } : { ...inputUsage, output_tokens: 1 },
      },
    }),
    ev({ type: "ping" }),
  ];

  let index = 0;
  const text = script.text ?? [];
  if (text.length > 0) {
    events.push(ev({ type: "content_block_start", index, content_block: { type: "text", text: "" } }));
    for (const t of text) {
      events.push(ev({ type: "content_block_delta", index, delta: { type: "text_delta", text: t } }));
    }
    events.push(ev({ type: "content_block_stop", index }));
    index++;
  }
  for (const call of script.toolCalls ?? []) {
    events.push(
      ev({
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: call.id, name: call.name, input: {} },
      }),
    );
    for (const part of splitInto(call.argumentsJson, script.argumentChunks ?? 3)) {
      events.push(
        ev({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: part } }),
      );
    }
    events.push(ev({ type: "content_block_stop", index }));
    index++;
  }

  if (script.streamError !== undefined) {
    events.push(ev({ type: "error", error: { type: "overloaded_error", message: script.streamError } }));
    return events;
  }
  events.contentEnd = events.length;
  if (script.cut) return events;
  const hasTools = (script.toolCalls ?? []).length > 0;
  events.push(
    ev({
      type: "message_delta",
      delta: { stop_reason: hasTools ? "tool_use" : "end_turn", stop_sequence: null },
      usage: script.usageAtEnd ? { ...inputUsage, output_tokens: usage.outputTokens } : { output_tokens: usage.outputTokens },
    }),
  );
  events.push(ev({ type: "message_stop" }));
  return events;
}

/**
 * One fake server for the test file, handed to `use` once started, reset before each test and
 * closed after the file. The SDK's compatibility notices about test model ids are silenced.
 */
export function fakeProviderServerForFile(use: (server: FakeProviderServer) => void): void {
  globalThis.AI_SDK_LOG_WARNINGS = false;
  let server: FakeProviderServer | undefined;
  beforeAll(async () => {
    server = await startFakeProviderServer();
    use(server);
  });
  afterAll(async () => {
    await server?.close();
  });
  beforeEach(() => server?.reset());
}
