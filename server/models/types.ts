// The one provider interface every model implements: streamed text, tool calls, usage.
// Provider-neutral on purpose: the runtime never sees an SDK type.

export type JsonSchema = Record<string, unknown>;

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the tool input (an object schema). */
  inputSchema: JsonSchema;
}

export interface ToolCall {
  toolCallId: string;
  toolName: string;
  /** Parsed JSON input as the model produced it; validated by the runtime, not here. */
  input: unknown;
}

export interface ToolResultPart {
  toolCallId: string;
  toolName: string;
  output: unknown;
  isError: boolean;
}

export type ModelMessage =
  | { role: "user"; text: string }
  | { role: "assistant"; text: string; toolCalls: ToolCall[] }
  | { role: "tool"; results: ToolResultPart[] };

export interface ModelRequest {
  system: string;
  messages: ModelMessage[];
  tools: ToolSpec[];
  /** "summary" asks for a compaction summary (no tools); real providers just see the text. */
  purpose: "step" | "summary";
  /** A lower output limit for this call than the model's own (a team budget's remaining room). */
  maxOutputTokens?: number;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** The part of inputTokens the provider served from its prompt cache (0 when not reported). */
  cachedInputTokens?: number;
}

/**
 * Why a step is not streaming yet: waiting for a provider slot, or backing off before retry
 * number `attempt` (1: the first retry) after a transient failure.
 */
export type ModelWait = { kind: "provider" } | { kind: "retry"; attempt: number; delayMs: number; reason: string };

export type ModelChunk =
  | { type: "text-delta"; text: string }
  | { type: "tool-call"; call: ToolCall }
  | { type: "finish"; usage: Usage }
  /** Emitted only before the first text or tool call of a step (models/resilience.ts). */
  | { type: "wait"; wait: ModelWait }
  /**
   * The provider is producing output that is no chunk yet (tool-call arguments, reasoning): it
   * ends the first-token wait (models/resilience.ts). Carries nothing; consumers ignore it.
   */
  | { type: "progress" };

export interface LanguageModel {
  /** "<provider>:<model>", for the transcript and diagnostics. */
  readonly id: string;
  /** The most output tokens one call asks for, when the model sets a limit (budgets reserve it). */
  readonly maxOutputTokens?: number;
  /** Streams one model call. Must stop promptly (throwing or returning) when `signal` aborts. */
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelChunk>;
}
