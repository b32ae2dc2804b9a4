import type { SqlRunner } from "../db/sql";
import type { SessionId } from "../ids";
import { formatRuntimeContext, type ContextSection } from "../models/runtime-context";

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
