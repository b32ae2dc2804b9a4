import type { SqlRunner } from "../db/sql";
import type { SessionId } from "../ids";

// Runtime context: named providers, each rendering one text section. Optional sections can
// be switched off per session; required ones (team identity) cannot. The loop compares the
// rendered snapshot with the last one the model still sees and appends only on a change.

export interface ContextScope {
  sessionId: SessionId;
  now: Date;
  /** Where providers read (the driver's, just before the step starts). */
  db?: SqlRunner;
}

export interface ContextProvider {
  name: string;
  required: boolean;
  /** null: nothing to say for this agent right now. */
  render(scope: ContextScope): Promise<string | null> | string | null;
}

export class ContextRegistry {
  private readonly providers = new Map<string, ContextProvider>();

  constructor(providers: ContextProvider[] = []) {
    for (const p of providers) this.register(p);
  }

  /** Returns a disposer that removes the provider again. */
  register(provider: ContextProvider): () => void {
    if (this.providers.has(provider.name)) throw new Error(`Context provider ${provider.name} already registered`);
    this.providers.set(provider.name, provider);
    return () => {
      if (this.providers.get(provider.name) === provider) this.providers.delete(provider.name);
    };
  }

  names(): string[] {
    return [...this.providers.keys()];
  }

  /** The full snapshot text, or null when no section renders. Sections keep registration order. */
  async renderSnapshot(scope: ContextScope, opts: { includeOptional: boolean }): Promise<string | null> {
    const sections: ContextSection[] = [];
    for (const p of this.providers.values()) {
      if (!p.required && !opts.includeOptional) continue;
      const text = await p.render(scope);
      if (text !== null && text.trim() !== "") sections.push({ name: p.name, text: text.trim() });
    }
    if (sections.length === 0) return null;
    return formatRuntimeContext(sections);
  }
}

// The snapshot's text format is a contract: the shared system prompt tells models how such a
// message starts, and the keyless model reads its sections back. Written and read only here.

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

/** Built-in optional provider: today's date, so the snapshot rule is exercised without teams. */
export const dateContextProvider: ContextProvider = {
  name: "clock:date",
  required: false,
  render: ({ now }) => `Today is ${now.toISOString().slice(0, 10)} (UTC).`,
};

/** Snapshot rule (SPEC.md §5): append when different, or when no snapshot is retained. */
export function snapshotToAppend(current: string | null, retained: string | null): string | null {
  if (current === null) return null;
  return current === retained ? null : current;
}
