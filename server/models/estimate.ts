import type { ModelRequest, Usage } from "./types";

// Token counts where no provider reported any: the keyless model's usage, and a reply cut off
// before its provider sent usage (a Stop, a broken stream, a timeout), which is billed all the
// same. About four characters a token; the event says the figure is estimated.

export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export function estimateUsage(request: ModelRequest, output: { text: string; toolCalls?: unknown[] }): Usage {
  return {
    inputTokens: estimateTextTokens(request.system + JSON.stringify(request.messages)),
    outputTokens: estimateTextTokens(output.text + JSON.stringify(output.toolCalls ?? [])),
  };
}
