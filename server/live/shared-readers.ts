import type { Db } from "../db/client";
import type { ActivityHub } from "./activity";

// The registry behind the live feeds' shared readers (session-feed.ts, team-feed.ts): one
// reader per watched key per process, made on first use, held by every feed of that key, and
// stopped when the last feed lets go (after `lingerMs`) or the process's hub closes.

/** "Something changed": `next()` settles on the next `fire()` (a fresh promise after each). */
export class ChangeSignal {
  private wake!: () => void;
  private pending!: Promise<void>;

  constructor() {
    this.renew();
  }

  next(): Promise<void> {
    return this.pending;
  }

  fire(): void {
    const wake = this.wake;
    this.renew();
    wake();
  }

  private renew(): void {
    this.pending = new Promise((resolve) => (this.wake = resolve));
  }
}

export interface SharedReader {
  /** What it reads for (a session id, a team id). */
  readonly key: string;
  close(): void;
}

interface Held<T> {
  reader: T;
  holders: number;
  lingering: NodeJS.Timeout | null;
}

export class SharedReaders<T extends SharedReader> {
  private readonly held = new Map<string, Held<T>>();

  constructor(
    private readonly make: (key: string) => T,
    private readonly lingerMs = 0,
  ) {}

  /** Holds the key's reader (made on first use); `release` it when the feed ends. */
  acquire(key: string): T {
    let h = this.held.get(key);
    if (!h) {
      h = { reader: this.make(key), holders: 0, lingering: null };
      this.held.set(key, h);
    }
    if (h.lingering) clearTimeout(h.lingering);
    h.lingering = null;
    h.holders += 1;
    return h.reader;
  }

  release(reader: T, lingerMs = this.lingerMs): void {
    const key = reader.key;
    const h = this.held.get(key);
    if (!h || h.reader !== reader) return reader.close();
    h.holders -= 1;
    if (h.holders > 0) return;
    const drop = () => {
      reader.close();
      if (this.held.get(key) === h) this.held.delete(key);
    };
    if (lingerMs <= 0) return drop();
    h.lingering = setTimeout(drop, lingerMs);
    h.lingering.unref();
  }

  /** Stops every reader (the process is closing). */
  closeAll(): void {
    for (const h of this.held.values()) {
      if (h.lingering) clearTimeout(h.lingering);
      h.reader.close();
    }
    this.held.clear();
  }

  /** Watched keys (diagnostics; tests check readers are shared and dropped). */
  watched(): string[] {
    return [...this.held.keys()];
  }
}

/** One `T` per process (per hub: one hub per process), closed with the hub. */
export function perProcess<T extends { closeAll(): void }>(make: (db: Db, hub: ActivityHub) => T): (db: Db, hub: ActivityHub) => T {
  const made = new WeakMap<ActivityHub, T>();
  return (db, hub) => {
    let feeds = made.get(hub);
    if (!feeds) {
      const fresh = make(db, hub);
      hub.onClose(() => fresh.closeAll());
      made.set(hub, fresh);
      feeds = fresh;
    }
    return feeds;
  };
}
