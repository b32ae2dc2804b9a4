import type { ModelMessage, ModelRequest, ToolSpec, Usage } from "./types";

// Token counts where no provider reported any: the keyless model's usage, and a reply cut off
// before its provider sent usage (a Stop, a broken stream, a timeout), which is billed all the
// same. About four characters a token; the event says the figure is estimated.

export function estimateTextTokens(text: string): number {
  return tokensOfChars(text.length);
}

export function tokensOfChars(chars: number): number {
  return Math.ceil(chars / 4);
}

/**
 * A request's usage as a provider counts it: the input is the system prompt, the tool list (the
 * definitions are sent, and billed, with every call) and the messages; the output is the text
 * and the tool calls.
 */
export function estimateUsage(request: ModelRequest, output: { text: string; toolCalls?: unknown[] }): Usage {
  return {
    inputTokens: tokensOfChars(request.system.length + toolsLength(request.tools) + jsonLength(request.messages)),
    outputTokens: estimateOutputTokens(output),
  };
}

/** The output tokens of a reply (its text and its tool calls). */
export function estimateOutputTokens(output: { text: string; toolCalls?: unknown[] }): number {
  return estimateTextTokens(output.text + JSON.stringify(output.toolCalls ?? []));
}

/** JSON.stringify(tools).length, measured once per list: a driver sends the same list every step. */
function toolsLength(tools: readonly ToolSpec[]): number {
  let l = toolsJsonLength.get(tools);
  if (l === undefined) toolsJsonLength.set(tools, (l = JSON.stringify(tools).length));
  return l;
}
const toolsJsonLength = new WeakMap<readonly ToolSpec[], number>();

/**
 * The length of JSON.stringify(messages), each message serialised once: a driver hands the
 * same message objects to every step of a session (runtime/history.ts ModelHistory), and
 * messages are never changed once made.
 */
function jsonLength(messages: readonly ModelMessage[]): number {
  let length = 1 + Math.max(1, messages.length);
  for (const m of messages) {
    let l = messageJsonLength.get(m);
    if (l === undefined) messageJsonLength.set(m, (l = JSON.stringify(m).length));
    length += l;
  }
  return length;
}
const messageJsonLength = new WeakMap<ModelMessage, number>();
