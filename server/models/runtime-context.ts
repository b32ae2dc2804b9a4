// The snapshot's text format is a contract: the shared system prompt tells models how such a
// message starts, and the keyless model reads its sections back. The runtime writes it
// (runtime/context-registry.ts); it lives on the models floor so the keyless model can read it.

/** What the shared system prompt calls these messages. */
export const RUNTIME_CONTEXT_LABEL = "Runtime context";
/** The first line of every runtime-context message. */
export const RUNTIME_CONTEXT_HEADER = `${RUNTIME_CONTEXT_LABEL} (current; supersedes earlier runtime context):`;

/** One provider's part of a snapshot: its name and its trimmed, non-empty text. */
export interface ContextSection {
  name: string;
  text: string;
}

/** The header line, then each section as `<name>`, its text, `</name>`, one per line. */
export function formatRuntimeContext(sections: readonly ContextSection[]): string {
  return [RUNTIME_CONTEXT_HEADER, ...sections.map((s) => `<${s.name}>\n${s.text}\n</${s.name}>`)].join("\n");
}

/** Whether a message is a runtime-context snapshot (it starts with the header line). */
export function isRuntimeContext(text: string): boolean {
  return text === RUNTIME_CONTEXT_HEADER || text.startsWith(`${RUNTIME_CONTEXT_HEADER}\n`);
}

/** A section: `<name>`, text (lazily, up to its own closing line), `</name>`. */
const SECTION = /<([^<>\n]+)>\n([\s\S]*?)\n<\/\1>(?:\n|$)/y;

/**
 * The sections of a snapshot written by formatRuntimeContext, in order; null when the text is
 * not a snapshot or not well formed. (A section text holding its own closing tag line does
 * not read back.)
 */
export function parseRuntimeContext(text: string): ContextSection[] | null {
  if (!isRuntimeContext(text)) return null;
  const body = text.slice(RUNTIME_CONTEXT_HEADER.length + 1);
  const re = new RegExp(SECTION.source, SECTION.flags);
  const sections: ContextSection[] = [];
  while (re.lastIndex < body.length) {
    const m = re.exec(body);
    if (!m) return null;
    sections.push({ name: m[1]!, text: m[2]! });
  }
  return sections;
}
