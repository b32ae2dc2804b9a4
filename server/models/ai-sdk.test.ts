// The real SDK clients against a local fake provider: what we send on the wire and what we make
// of what comes back, for both the OpenAI-compatible and the Anthropic format.

import { describe, expect, it, vi } from "vitest";
import { createAnthropicModel, createOpenAICompatibleModel, ModelProviderError } from "./ai-sdk";
import { decide, DEFAULT_RETRY_POLICY } from "./retry-policy";
import { fakeProviderServerForFile, startFakeProviderServer, type FakeProviderServer } from "./testing/fake-provider-server";
import type { LanguageModel, ModelChunk, ModelRequest } from "./types";

let server: FakeProviderServer;
fakeProviderServerForFile((s) => (server = s));

const READ_FILE_SCHEMA = {
  type: "object",
  properties: { path: { type: "string", description: "Relative path" } },
  required: ["path"],
  additionalProperties: false,
};
const SEARCH_SCHEMA = {
  type: "object",
  properties: { query: { type: "string" }, limit: { type: "integer", minimum: 1 } },
  required: ["query"],
};

const HISTORY_REQUEST: ModelRequest = {
  system: "You are a careful engineer.",
  purpose: "step",
  tools: [
    { name: "read_file", description: "Read a file", inputSchema: READ_FILE_SCHEMA },
    { name: "search", description: "Search the repo", inputSchema: SEARCH_SCHEMA },
  ],
  messages: [
    { role: "user", text: "What is in a.ts?" },
    {
      role: "assistant",
      text: "Let me look.",
      toolCalls: [
        { toolCallId: "call_1", toolName: "read_file", input: { path: "a.ts" } },
        // A malformed call as the runtime stores it: the raw argument string.
        { toolCallId: "call_2", toolName: "search", input: '{"query": "x' },
      ],
    },
    {
      role: "tool",
      results: [
        { toolCallId: "call_1", toolName: "read_file", output: { content: "export {}" }, isError: false },
        { toolCallId: "call_2", toolName: "search", output: "Invalid JSON in tool input", isError: true },
      ],
    },
    { role: "user", text: "Thanks, go on." },
  ],
};

const SIMPLE_REQUEST: ModelRequest = {
  system: "Be brief.",
  purpose: "step",
  tools: HISTORY_REQUEST.tools,
  messages: [{ role: "user", text: "Hi" }],
};

async function collect(iterable: AsyncIterable<ModelChunk>): Promise<ModelChunk[]> {
  const out: ModelChunk[] = [];
  for await (const c of iterable) out.push(c);
  return out;
}

const texts = (chunks: ModelChunk[]) =>
  chunks.flatMap((c) => (c.type === "text-delta" ? [c.text] : []));
const calls = (chunks: ModelChunk[]) => chunks.flatMap((c) => (c.type === "tool-call" ? [c.call] : []));

async function waitFor(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  await vi.waitFor(
    () => {
      if (!condition()) throw new Error("condition not met in time");
    },
    { timeout: timeoutMs, interval: 10 },
  );
}

const PROVIDERS: { wire: string; make: () => LanguageModel; id: string }[] = [
  {
    wire: "openai",
    id: "openai-compatible:gpt-test",
    make: () => createOpenAICompatibleModel({ baseURL: server.baseURL, apiKey: "sk-test", model: "gpt-test" }),
  },
  {
    wire: "anthropic",
    id: "anthropic:claude-test",
    make: () => createAnthropicModel({ baseURL: server.baseURL, apiKey: "ak-test", model: "claude-test" }),
  },
];

describe.each(PROVIDERS)("$wire wire format", ({ make, id }) => {
  it("has a provider:model id", () => {
    expect(make().id).toBe(id);
  });

  it("streams text as several deltas in order, then one finish with usage", async () => {
    server.enqueue({ text: ["Hel", "lo", ", wor", "ld"], usage: { inputTokens: 12, outputTokens: 4 } });
    const chunks = await collect(make().stream(SIMPLE_REQUEST, new AbortController().signal));

    expect(texts(chunks)).toEqual(["Hel", "lo", ", wor", "ld"]);
    expect(texts(chunks).join("")).toBe("Hello, world");
    expect(chunks.filter((c) => c.type === "finish")).toHaveLength(1);
    expect(chunks.at(-1)).toEqual({ type: "finish", usage: { inputTokens: 12, outputTokens: 4, cachedInputTokens: 0 } });
  });

  it("reports zero usage when the provider sends none", async () => {
    server.enqueue({ text: ["ok"] });
    const chunks = await collect(make().stream(SIMPLE_REQUEST, new AbortController().signal));
    expect(chunks.at(-1)).toEqual({ type: "finish", usage: { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 } });
  });

  it("reports cached input tokens inside inputTokens, as each format sends them", async () => {
    // 100 input tokens of which 60 came from the cache: OpenAI says prompt_tokens 100 with
    // cached_tokens 60; Anthropic says input_tokens 40 with cache_read_input_tokens 60.
    server.enqueue({ text: ["ok"], usage: { inputTokens: 100, outputTokens: 5, cachedInputTokens: 60 } });
    const chunks = await collect(make().stream(SIMPLE_REQUEST, new AbortController().signal));
    expect(chunks.at(-1)).toEqual({ type: "finish", usage: { inputTokens: 100, outputTokens: 5, cachedInputTokens: 60 } });
  });

  it("yields two tool calls whose split arguments come out parsed", async () => {
    server.enqueue({
      text: ["Checking."],
      toolCalls: [
        { id: "tc_1", name: "read_file", argumentsJson: '{"path": "src/index.ts"}' },
        { id: "tc_2", name: "search", argumentsJson: '{"query": "TODO", "limit": 5}' },
      ],
      usage: { inputTokens: 30, outputTokens: 20 },
    });
    const chunks = await collect(make().stream(SIMPLE_REQUEST, new AbortController().signal));

    expect(texts(chunks)).toEqual(["Checking."]);
    expect(calls(chunks)).toEqual([
      { toolCallId: "tc_1", toolName: "read_file", input: { path: "src/index.ts" } },
      { toolCallId: "tc_2", toolName: "search", input: { query: "TODO", limit: 5 } },
    ]);
    expect(chunks.at(-1)).toEqual({ type: "finish", usage: { inputTokens: 30, outputTokens: 20, cachedInputTokens: 0 } });
  });

  it("reports cached input tokens, and usage sent only at the end of the stream", async () => {
    server.enqueue({ text: ["ok"], usage: { inputTokens: 100, outputTokens: 9, cachedInputTokens: 60 }, usageAtEnd: true });
    const chunks = await collect(make().stream(SIMPLE_REQUEST, new AbortController().signal));
    expect(chunks.at(-1)).toEqual({ type: "finish", usage: { inputTokens: 100, outputTokens: 9, cachedInputTokens: 60 } });
  });

  it("says the provider is alive as soon as tool-call arguments start, before the call is whole", async () => {
    server.enqueue({ toolCalls: [{ id: "tc_1", name: "read_file", argumentsJson: '{"path": "a.ts"}' }] });
    const chunks = await collect(make().stream(SIMPLE_REQUEST, new AbortController().signal));
    expect(chunks.map((c) => c.type)).toEqual(["progress", "tool-call", "finish"]);
  });

  it("yields malformed tool arguments as a tool call with the raw string, without throwing", async () => {
    server.enqueue({
      toolCalls: [
        { id: "tc_bad", name: "read_file", argumentsJson: '{"path": "a.ts"' },
        { id: "tc_ok", name: "search", argumentsJson: '{"query": "q"}' },
      ],
    });
    const chunks = await collect(make().stream(SIMPLE_REQUEST, new AbortController().signal));

    expect(calls(chunks)).toEqual([
      { toolCallId: "tc_bad", toolName: "read_file", input: '{"path": "a.ts"' },
      { toolCallId: "tc_ok", toolName: "search", input: { query: "q" } },
    ]);
    expect(chunks.at(-1)?.type).toBe("finish");
  });

  it("yields a call to an unknown tool with its parsed input, without throwing", async () => {
    server.enqueue({ toolCalls: [{ id: "tc_x", name: "delete_everything", argumentsJson: '{"force": true}' }] });
    const chunks = await collect(make().stream(SIMPLE_REQUEST, new AbortController().signal));
    expect(calls(chunks)).toEqual([{ toolCallId: "tc_x", toolName: "delete_everything", input: { force: true } }]);
  });

  it("turns HTTP 500 into a readable error with the status code", async () => {
    server.enqueue({ status: 500, message: "upstream exploded" });
    const error = await collect(make().stream(SIMPLE_REQUEST, new AbortController().signal)).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ModelProviderError);
    expect((error as ModelProviderError).statusCode).toBe(500);
    expect((error as Error).message).toBe(`${id} request failed (HTTP 500): upstream exploded`);
    // maxRetries is 0: exactly one attempt, retries are the runtime's call.
    expect(server.requests).toHaveLength(1);
  });

  it("keeps what the retry policy needs: the status and Retry-After, no other header", async () => {
    server.enqueue({ status: 429, message: "slow down", headers: { "Retry-After": "7", "x-request-id": "req_secret" } });
    const error = (await collect(make().stream(SIMPLE_REQUEST, new AbortController().signal)).catch((e: unknown) => e)) as ModelProviderError;
    expect(error.failure).toEqual({ kind: "http", status: 429, headers: { "retry-after": "7" }, message: expect.stringContaining("slow down") });
    expect(decide(error.failure!, 1, DEFAULT_RETRY_POLICY, { random: () => 0.5 })).toEqual({ retry: true, delayMs: 7000, reason: "429 rate limited" });
    expect(server.requests).toHaveLength(1);
  });

  it("turns HTTP 401 into a readable error with the status code", async () => {
    server.enqueue({ status: 401, message: "invalid api key" });
    const stream = make().stream(SIMPLE_REQUEST, new AbortController().signal);
    await expect(collect(stream)).rejects.toThrow(`${id} request failed (HTTP 401): invalid api key`);
    // The key a provider echoes is redacted in the failure the retry policy reads, too.
    server.enqueue({ status: 401, message: "bad key {key}" });
    const error = (await collect(make().stream(SIMPLE_REQUEST, new AbortController().signal)).catch((e: unknown) => e)) as ModelProviderError;
    expect(error.failure).toMatchObject({ kind: "http", status: 401 });
    expect(JSON.stringify(error.failure)).not.toMatch(/sk-test|ak-test/);
    expect(decide(error.failure!, 1)).toMatchObject({ retry: false, permanent: true });
  });

  it("turns an in-stream provider error into a readable error after the text so far", async () => {
    server.enqueue({ text: ["partial"], streamError: "overloaded, try later" });
    const seen: ModelChunk[] = [];
    const run = async () => {
      for await (const c of make().stream(SIMPLE_REQUEST, new AbortController().signal)) seen.push(c);
    };
    await expect(run()).rejects.toThrow(/stream failed: .*overloaded, try later/);
    expect(texts(seen)).toEqual(["partial"]);
    expect(seen.some((c) => c.type === "finish")).toBe(false);
  });

  it("stops promptly when aborted mid-stream and drops the HTTP request", async () => {
    const pieces = Array.from({ length: 40 }, (_, i) => `w${i} `);
    server.enqueue({ text: pieces, delayMs: 50 });
    const controller = new AbortController();
    const seen: ModelChunk[] = [];
    let abortedAt = 0;
    const run = async () => {
      for await (const c of make().stream(SIMPLE_REQUEST, controller.signal)) {
        seen.push(c);
        if (texts(seen).length === 2) {
          abortedAt = Date.now();
          controller.abort();
        }
      }
    };

    await expect(run()).rejects.toMatchObject({ name: "AbortError" });
    expect(Date.now() - abortedAt).toBeLessThan(500);
    expect(texts(seen)).toEqual(["w0 ", "w1 "]);
    await waitFor(() => server.requests[0]?.disconnectedEarly === true);
  });

  it("drops the HTTP request when the consumer stops iterating early", async () => {
    server.enqueue({ text: Array.from({ length: 40 }, () => "x"), delayMs: 50 });
    for await (const c of make().stream(SIMPLE_REQUEST, new AbortController().signal)) {
      if (c.type === "text-delta") break;
    }
    await waitFor(() => server.requests[0]?.disconnectedEarly === true);
  });

  it("throws before any request when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(collect(make().stream(SIMPLE_REQUEST, controller.signal))).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(server.requests).toHaveLength(0);
  });
});

describe("network failure", () => {
  it("throws a readable error when the provider cannot be reached", async () => {
    const gone = await startFakeProviderServer();
    await gone.close();
    const model = createOpenAICompatibleModel({ baseURL: gone.baseURL, model: "gpt-test" });
    const error = await collect(model.stream(SIMPLE_REQUEST, new AbortController().signal)).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ModelProviderError);
    expect((error as ModelProviderError).statusCode).toBeUndefined();
    expect((error as Error).message).toMatch(/^openai-compatible:gpt-test request failed: Cannot connect to API/);
    expect((error as ModelProviderError).failure).toMatchObject({ kind: "connection" });
  });
});

describe("what goes on the wire", () => {
  it("asks for the model's output limit, or a lower one a request sets (a budget's room)", async () => {
    const openai = createOpenAICompatibleModel({ baseURL: server.baseURL, apiKey: "sk-test", model: "gpt-test", maxOutputTokens: 8_000 });
    const anthropic = createAnthropicModel({ baseURL: server.baseURL, apiKey: "ak-test", model: "claude-test", maxOutputTokens: 8_000 });
    expect([openai.maxOutputTokens, anthropic.maxOutputTokens]).toEqual([8_000, 8_000]);
    for (const model of [openai, anthropic]) {
      server.enqueue({ text: ["ok"] });
      await collect(model.stream(SIMPLE_REQUEST, new AbortController().signal));
      server.enqueue({ text: ["ok"] });
      await collect(model.stream({ ...SIMPLE_REQUEST, maxOutputTokens: 300 }, new AbortController().signal));
    }
    // OpenAI's wire calls it max_tokens, Anthropic's too.
    expect(server.requests.map((r) => (r.body as { max_tokens?: number }).max_tokens)).toEqual([8_000, 300, 8_000, 300]);
  });

  it("openai: system prompt, mapped history, tools with schemas, bearer key, usage requested", async () => {
    server.enqueue({ text: ["ok"] });
    const model = createOpenAICompatibleModel({ baseURL: server.baseURL, apiKey: "sk-test", model: "gpt-test" });
    await collect(model.stream(HISTORY_REQUEST, new AbortController().signal));

    expect(server.requests).toHaveLength(1);
    const req = server.requests[0]!;
    expect(req.path).toBe("/v1/chat/completions");
    expect(req.headers.authorization).toBe("Bearer sk-test");
    expect(req.body).toMatchObject({
      model: "gpt-test",
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: "system", content: "You are a careful engineer." },
        { role: "user", content: "What is in a.ts?" },
        {
          role: "assistant",
          content: "Let me look.",
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"a.ts"}' } },
            // The malformed call is replayed with empty arguments; its error result explains it.
            { id: "call_2", type: "function", function: { name: "search", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: '{"content":"export {}"}' },
        { role: "tool", tool_call_id: "call_2", content: "Invalid JSON in tool input" },
        { role: "user", content: "Thanks, go on." },
      ],
      tools: [
        {
          type: "function",
          function: { name: "read_file", description: "Read a file", parameters: READ_FILE_SCHEMA },
        },
        { type: "function", function: { name: "search", description: "Search the repo", parameters: SEARCH_SCHEMA } },
      ],
    });
    expect((req.body as { messages: unknown[] }).messages).toHaveLength(6);
  });

  it("anthropic: system prompt, mapped history, tools with schemas, x-api-key", async () => {
    server.enqueue({ text: ["ok"] });
    const model = createAnthropicModel({ baseURL: server.baseURL, apiKey: "ak-test", model: "claude-test" });
    await collect(model.stream(HISTORY_REQUEST, new AbortController().signal));

    expect(server.requests).toHaveLength(1);
    const req = server.requests[0]!;
    expect(req.path).toBe("/v1/messages");
    expect(req.headers["x-api-key"]).toBe("ak-test");
    expect(req.headers.authorization).toBeUndefined();
    expect(req.headers["anthropic-version"]).toBeDefined();
    expect(req.body).toMatchObject({
      model: "claude-test",
      stream: true,
      system: [{ type: "text", text: "You are a careful engineer." }],
      messages: [
        { role: "user", content: [{ type: "text", text: "What is in a.ts?" }] },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Let me look." },
            { type: "tool_use", id: "call_1", name: "read_file", input: { path: "a.ts" } },
            { type: "tool_use", id: "call_2", name: "search", input: {} },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_1", content: '{"content":"export {}"}' },
            { type: "tool_result", tool_use_id: "call_2", content: "Invalid JSON in tool input", is_error: true },
            // Anthropic needs strict alternation, so the SDK merges the next user turn in here.
            { type: "text", text: "Thanks, go on." },
          ],
        },
      ],
      tools: [
        { name: "read_file", description: "Read a file", input_schema: READ_FILE_SCHEMA },
        { name: "search", description: "Search the repo", input_schema: SEARCH_SCHEMA },
      ],
    });
    const body = req.body as { messages: { content: Record<string, unknown>[] }[] };
    expect(body.messages).toHaveLength(3);
    // toMatchObject treats `{}` as "anything"; Anthropic rejects a non-object input, so be exact.
    expect(body.messages[1]!.content[2]).toEqual({ type: "tool_use", id: "call_2", name: "search", input: {} });
    // Only the failed result is flagged as an error.
    expect(body.messages[2]!.content[0]!.is_error).toBeUndefined();
  });

  it("sends no tools when the request has none (e.g. a compaction summary)", async () => {
    server.enqueue({ text: ["summary"] }, { text: ["summary"] });
    const request: ModelRequest = { ...SIMPLE_REQUEST, tools: [], purpose: "summary" };
    await collect(
      createOpenAICompatibleModel({ baseURL: server.baseURL, model: "gpt-test" }).stream(
        request,
        new AbortController().signal,
      ),
    );
    await collect(
      createAnthropicModel({ baseURL: server.baseURL, apiKey: "k", model: "claude-test" }).stream(
        request,
        new AbortController().signal,
      ),
    );
    expect(server.requests.map((r) => (r.body as Record<string, unknown>).tools)).toEqual([undefined, undefined]);
    // No key configured: no Authorization header at all, not "Bearer undefined".
    expect(server.requests[0]!.headers.authorization).toBeUndefined();
  });
});
