// Real providers behind our LanguageModel interface, via the Vercel AI SDK (ai v6).
// One model call = one step: tools are declared without `execute`, so the SDK only parses tool
// calls and the runtime runs them. Nothing SDK-shaped leaks out of this module.

import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import {
  APICallError,
  RetryError,
  jsonSchema,
  streamText,
  tool,
  type JSONSchema7,
  type JSONValue,
  type LanguageModel as SdkLanguageModel,
  type ModelMessage as SdkMessage,
  type ToolResultPart as SdkToolResultPart,
  type ToolSet,
} from "ai";
import type {
  LanguageModel,
  ModelChunk,
  ModelMessage,
  ModelRequest,
  ToolResultPart,
  ToolSpec,
  Usage,
} from "./types";
import { UNKNOWN_ANTHROPIC_MAX_OUTPUT_TOKENS } from "./known-models";
import { redactSecrets } from "./redact";
import type { Failure } from "./retry-policy";

/** A failed model call, with a message fit for the transcript. */
export class ModelProviderError extends Error {
  override readonly name = "ModelProviderError";
  constructor(
    message: string,
    /** HTTP status when the provider answered with an error; undefined for network/stream errors. */
    readonly statusCode?: number,
    options?: { cause?: unknown },
    /**
     * What failed, for the retry policy (retry-policy.ts): the HTTP answer (with only its
     * Retry-After headers) or the connection. Undefined for an error inside a started stream.
     */
    readonly failure?: Failure,
  ) {
    super(message, options);
  }
}

/** The only response headers kept: what the retry policy reads (nothing else leaves the adapter). */
const RETRY_HEADERS = ["retry-after", "retry-after-ms"];

export interface OpenAICompatibleModelOptions {
  /** e.g. https://api.openai.com/v1 (the SDK appends /chat/completions). */
  baseURL: string;
  apiKey?: string;
  model: string;
  /** Provider label for the model id; defaults to "openai-compatible" (the registry's provider name). */
  name?: string;
  /** Output tokens one request asks for (known-models.ts); unset, the server's own limit. */
  maxOutputTokens?: number;
}

export function createOpenAICompatibleModel(opts: OpenAICompatibleModelOptions): LanguageModel {
  const name = opts.name ?? "openai-compatible";
  const provider = createOpenAICompatible({
    name,
    baseURL: opts.baseURL,
    apiKey: opts.apiKey,
    // Without this the SDK omits stream_options.include_usage and streamed usage is unknown.
    includeUsage: true,
  });
  return sdkBackedModel(`${name}:${opts.model}`, provider.chatModel(opts.model), opts.maxOutputTokens, [opts.apiKey]);
}

export interface AnthropicModelOptions {
  /** Defaults to https://api.anthropic.com/v1 (the SDK appends /messages). */
  baseURL?: string;
  apiKey: string;
  model: string;
  /** Output tokens one request asks for (known-models.ts); the API requires a figure. */
  maxOutputTokens?: number;
}

export function createAnthropicModel(opts: AnthropicModelOptions): LanguageModel {
  const provider = createAnthropic({ baseURL: opts.baseURL, apiKey: opts.apiKey });
  return sdkBackedModel(`anthropic:${opts.model}`, provider.messages(opts.model), opts.maxOutputTokens ?? UNKNOWN_ANTHROPIC_MAX_OUTPUT_TOKENS, [opts.apiKey]);
}

function sdkBackedModel(id: string, model: SdkLanguageModel, maxOutputTokens: number | undefined, secrets: (string | undefined)[]): LanguageModel {
  return { id, maxOutputTokens, stream: (request, signal) => redactingErrors(streamOneStep(id, model, maxOutputTokens, request, signal), secrets, signal) };
}

/**
 * Every failure leaves as a ModelProviderError whose message has the keys redacted, and with
 * no `cause` (the SDK's error objects carry the raw response body and request headers).
 */
async function* redactingErrors(stream: AsyncGenerator<ModelChunk>, secrets: (string | undefined)[], signal: AbortSignal): AsyncGenerator<ModelChunk> {
  try {
    yield* stream;
  } catch (e) {
    if (signal.aborted) throw e;
    const message = redactSecrets(e instanceof Error ? e.message : String(e), secrets);
    const known = e instanceof ModelProviderError ? e : null;
    const f = known?.failure;
    const failure = f && f.kind !== "first-token-timeout" && f.message !== undefined ? { ...f, message: redactSecrets(f.message, secrets) } : f;
    throw new ModelProviderError(message, known?.statusCode, undefined, failure);
  }
}

async function* streamOneStep(
  id: string,
  model: SdkLanguageModel,
  maxOutputTokens: number | undefined,
  request: ModelRequest,
  signal: AbortSignal,
): AsyncGenerator<ModelChunk> {
  signal.throwIfAborted();
  // Our own controller as well, so a consumer that stops iterating early also tears down the
  // HTTP request instead of leaving it streaming in the background.
  const done = new AbortController();
  const abortSignal = AbortSignal.any([signal, done.signal]);
  try {
    const result = streamText({
      model,
      system: request.system,
      messages: toSdkMessages(request.messages),
      // Omitted rather than empty: some OpenAI-compatible servers reject `tools: []`.
      tools: request.tools.length > 0 ? toSdkTools(request.tools) : undefined,
      abortSignal,
      maxOutputTokens: request.maxOutputTokens ?? maxOutputTokens,
      // Retrying is the runtime's decision (it knows the turn); fail fast here.
      maxRetries: 0,
      // Errors are rethrown from fullStream below; the default handler would also console.error them.
      onError: () => {},
    });

    let usage: Usage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 };
    for await (const part of readable(id, result.fullStream, signal)) {
      switch (part.type) {
        case "text-delta":
          if (part.text.length > 0) yield { type: "text-delta", text: part.text };
          break;
        case "tool-call":
          // Also covers calls the SDK marks `invalid` (unparsable JSON arguments, unknown tool):
          // `input` is then the raw argument string, or the parsed value for an unknown tool.
          // The runtime turns those into a readable tool error for the model.
          yield {
            type: "tool-call",
            call: { toolCallId: part.toolCallId, toolName: part.toolName, input: part.input },
          };
          break;
        case "tool-input-start":
        case "reasoning-start":
          yield { type: "progress" };
          break;
        case "finish": {
          // The SDK's inputTokens include cached ones for both providers (Anthropic's own
          // input_tokens do not; its adapter adds cache reads and writes back), as ours do.
          usage = {
            inputTokens: part.totalUsage.inputTokens ?? 0,
            outputTokens: part.totalUsage.outputTokens ?? 0,
            cachedInputTokens: part.totalUsage.inputTokenDetails.cacheReadTokens ?? 0,
          };
          break;
        }
        case "error":
          signal.throwIfAborted();
          throw toProviderError(id, part.error);
        case "abort":
          signal.throwIfAborted();
          throw new ModelProviderError(`${id}: stream aborted`);
        // "tool-error" only follows an invalid "tool-call" here (no tool has `execute`), so it
        // would duplicate it; step/text boundaries and reasoning carry nothing we need.
        default:
          break;
      }
    }
    yield { type: "finish", usage };
  } finally {
    done.abort();
  }
}

/** Errors thrown by the stream itself (a connection cut mid-body) become provider errors too. */
async function* readable<T>(id: string, stream: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  try {
    yield* stream;
  } catch (e) {
    signal.throwIfAborted();
    throw e instanceof ModelProviderError ? e : toProviderError(id, e);
  }
}

function toSdkTools(specs: ToolSpec[]): ToolSet {
  const tools: ToolSet = {};
  for (const spec of specs) {
    tools[spec.name] = tool({
      description: spec.description,
      // No `validate`: the SDK passes input through and the runtime validates it.
      inputSchema: jsonSchema(spec.inputSchema as JSONSchema7),
    });
  }
  return tools;
}

function toSdkMessages(messages: ModelMessage[]): SdkMessage[] {
  const out: SdkMessage[] = [];
  for (const m of messages) {
    switch (m.role) {
      case "user":
        out.push({ role: "user", content: m.text });
        break;
      case "assistant": {
        const content = [
          ...(m.text.length > 0 ? [{ type: "text" as const, text: m.text }] : []),
          ...m.toolCalls.map((c) => ({
            type: "tool-call" as const,
            toolCallId: c.toolCallId,
            toolName: c.toolName,
            input: replayableInput(c.input),
          })),
        ];
        // Providers reject empty assistant turns (Anthropic: "text content blocks must be non-empty").
        if (content.length > 0) out.push({ role: "assistant", content });
        break;
      }
      case "tool":
        out.push({
          role: "tool",
          content: m.results.map((r) => ({
            type: "tool-result" as const,
            toolCallId: r.toolCallId,
            toolName: r.toolName,
            output: toToolOutput(r),
          })),
        });
        break;
    }
  }
  return out;
}

/**
 * Providers require tool-call input to be a JSON object (Anthropic rejects anything else), but a
 * malformed call carries its raw argument string. Replay those as `{}`, as the SDK itself does;
 * the paired tool error result tells the model what went wrong.
 */
function replayableInput(input: unknown): unknown {
  return typeof input === "object" && input !== null && !Array.isArray(input) ? input : {};
}

/** Strings go as text (models read them as-is), anything else as JSON. */
function toToolOutput(r: ToolResultPart): SdkToolResultPart["output"] {
  if (typeof r.output === "string") {
    return { type: r.isError ? "error-text" : "text", value: r.output };
  }
  return { type: r.isError ? "error-json" : "json", value: toJsonValue(r.output) };
}

function toJsonValue(value: unknown): JSONValue {
  try {
    const text = JSON.stringify(value);
    // JSON.parse of JSON.stringify output is JSON by construction.
    return text === undefined ? null : (JSON.parse(text) as JSONValue);
  } catch {
    // Cycles / BigInt: still hand the model something readable.
    return String(value);
  }
}

function toProviderError(id: string, error: unknown): ModelProviderError {
  const cause = RetryError.isInstance(error) ? error.lastError : error;
  if (APICallError.isInstance(cause) && cause.statusCode !== undefined && cause.statusCode < 300) {
    // The provider answered 200 and the body broke off: the connection, not a refusal.
    const message = `the response stream broke off (${describe(cause.cause ?? cause)})`;
    return new ModelProviderError(`${id}: ${message}`, undefined, undefined, { kind: "connection", message });
  }
  if (APICallError.isInstance(cause)) {
    const status = cause.statusCode;
    const where = status !== undefined ? ` (HTTP ${status})` : "";
    const headers = Object.fromEntries(Object.entries(cause.responseHeaders ?? {}).filter(([k]) => RETRY_HEADERS.includes(k.toLowerCase())));
    const failure: Failure = status !== undefined ? { kind: "http", status, headers, message: cause.message } : { kind: "connection", message: cause.message };
    return new ModelProviderError(`${id} request failed${where}: ${cause.message}`, status, { cause }, failure);
  }
  return new ModelProviderError(`${id} stream failed: ${describe(cause)}`, undefined, { cause }, inStreamFailure(cause));
}

/**
 * Anthropic reports overload and rate limits as an error event in a 200 stream; they are as
 * transient as the HTTP answers they stand for. Other in-stream errors stay unclassified.
 */
const IN_STREAM_STATUS: Record<string, number> = { overloaded_error: 529, rate_limit_error: 429, api_error: 500 };

function inStreamFailure(error: unknown): Failure | undefined {
  if (typeof error !== "object" || error === null || !("type" in error) || typeof error.type !== "string") return undefined;
  const status = IN_STREAM_STATUS[error.type];
  return status === undefined ? undefined : { kind: "http", status, message: describe(error) };
}

/** In-stream provider errors arrive as plain objects such as `{ type, message }`, not Errors. */
function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  if (typeof error === "object" && error !== null && "message" in error) {
    const { message } = error;
    const type = "type" in error && typeof error.type === "string" ? `${error.type}: ` : "";
    if (typeof message === "string") return `${type}${message}`;
  }
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
