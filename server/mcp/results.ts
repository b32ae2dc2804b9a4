import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { LIMITS } from "../../shared/limits";

// An MCP tool result as the model reads it: one text. Text blocks as they are; an embedded text
// resource with its URI; a resource link as its URI and name; images, audio and binary
// resources as a line naming their type and size (the runtime passes text to every model, so
// nothing a model cannot read is sent as if it could); structured content as JSON when the
// server sent no text. Over LIMITS.mcpResultChars the text is cut, with a note saying so.

type Block = CallToolResult["content"][number];

/** Bytes a base64 string decodes to. */
function decodedBytes(base64: string): number {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((base64.length * 3) / 4) - padding);
}

function size(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} kB`;
}

function blockText(b: Block): string {
  switch (b.type) {
    case "text":
      return b.text;
    case "image":
    case "audio":
      return `[${b.type} ${b.mimeType}, ${size(decodedBytes(b.data))}: not shown, only text reaches the model]`;
    case "resource_link":
      return `[resource link: ${b.uri}${b.name ? ` (${b.name})` : ""}${b.description ? ` ${b.description}` : ""}]`;
    case "resource": {
      const r = b.resource;
      if ("text" in r && typeof r.text === "string") return `[resource ${r.uri}${r.mimeType ? ` ${r.mimeType}` : ""}]\n${r.text}`;
      const blob = "blob" in r && typeof r.blob === "string" ? r.blob : "";
      return `[resource ${r.uri}${r.mimeType ? ` ${r.mimeType}` : ""}, ${size(decodedBytes(blob))} binary: not shown]`;
    }
    default:
      return `[${(b as { type: string }).type} content: not shown]`;
  }
}

/** The result's text, cut to `limit` characters with a note when longer. */
export function resultText(result: Pick<CallToolResult, "content" | "structuredContent">, limit: number = LIMITS.mcpResultChars): string {
  const parts = (result.content ?? []).map(blockText);
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  const text = parts.join("\n");
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)}\n[cut: the result was ${text.length} characters; only the first ${limit} are shown]`;
}
