import type { ModelMessage, ModelRequest, Usage } from "./types";

// Token counts where no provider reported any: the keyless model's usage, and a reply cut off
// before its provider sent usage (a Stop, a broken stream, a timeout), which is billed all the
// same. About four characters a token; the event says the figure is estimated.

export function estimateTextTokens(text: string): number {
  return tokensOfChars(text.length);
}

export function tokensOfChars(chars: number): number {
  return Math.ceil(chars / 4);
}

export function estimateUsage(request: ModelRequest, output: { text: string; toolCalls?: unknown[] }): Usage {
  return {
    inputTokens: tokensOfChars(request.system.length + jsonLength(request.messages)),
    outputTokens: estimateTextTokens(output.text + JSON.stringify(output.toolCalls ?? [])),
  };
}

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
