// A persistent list for the transcript: items in fixed-size chunks (every chunk but the last
// is full), so a batch that appends to or changes the end copies the chunks it touches and
// the chunk index, never the whole history. Lists are never mutated once built: React may
// hold (and StrictMode re-run updates on) any earlier one.

const CHUNK = 256;

export interface ChunkList<T> {
  readonly chunks: readonly (readonly T[])[];
  readonly length: number;
}

export function emptyList<T>(): ChunkList<T> {
  return { chunks: [], length: 0 };
}

export function listAt<T>(list: ChunkList<T>, i: number): T | undefined {
  if (i < 0 || i >= list.length) return undefined;
  return list.chunks[Math.floor(i / CHUNK)]![i % CHUNK];
}

/** Items [from, to) as an array: what a window renders. */
export function listSlice<T>(list: ChunkList<T>, from = 0, to = list.length): T[] {
  const out: T[] = [];
  for (let i = Math.max(0, from); i < Math.min(to, list.length); i++) out.push(list.chunks[Math.floor(i / CHUNK)]![i % CHUNK]!);
  return out;
}

/** The items in order, without copying them into one array. */
export function* listItems<T>(list: ChunkList<T>): Generator<T> {
  for (const chunk of list.chunks) yield* chunk;
}

export const listToArray = <T>(list: ChunkList<T>): T[] => list.chunks.flat() as T[];

export function listFrom<T>(items: readonly T[]): ChunkList<T> {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) chunks.push(items.slice(i, i + CHUNK));
  return { chunks, length: items.length };
}

/**
 * Changes to a list, copy-on-write: each chunk the batch touches is copied once, on its first
 * change, and `done()` returns the new list (the old one is left as it was).
 */
export class ListBuilder<T> {
  private readonly chunks: T[][];
  private readonly owned = new Set<T[]>();
  private size: number;

  constructor(list: ChunkList<T>) {
    this.chunks = list.chunks.slice() as T[][];
    this.size = list.length;
  }

  get length(): number {
    return this.size;
  }

  at(i: number): T | undefined {
    if (i < 0 || i >= this.size) return undefined;
    return this.chunks[Math.floor(i / CHUNK)]![i % CHUNK];
  }

  private own(c: number): T[] {
    const chunk = this.chunks[c]!;
    if (this.owned.has(chunk)) return chunk;
    const copy = chunk.slice();
    this.chunks[c] = copy;
    this.owned.add(copy);
    return copy;
  }

  set(i: number, item: T): void {
    if (i < 0 || i >= this.size) throw new RangeError(`index ${i} outside 0..${this.size - 1}`);
    this.own(Math.floor(i / CHUNK))[i % CHUNK] = item;
  }

  push(item: T): void {
    if (this.size % CHUNK === 0) {
      const chunk: T[] = [];
      this.owned.add(chunk);
      this.chunks.push(chunk);
    }
    this.own(this.chunks.length - 1).push(item);
    this.size += 1;
  }

  /** Removes item i; costs the items after it (callers remove only near the end). */
  removeAt(i: number): void {
    if (i < 0 || i >= this.size) throw new RangeError(`index ${i} outside 0..${this.size - 1}`);
    const after: T[] = [];
    for (let k = i + 1; k < this.size; k++) after.push(this.at(k)!);
    const keep = Math.floor(i / CHUNK);
    this.chunks.length = keep + (i % CHUNK === 0 ? 0 : 1);
    if (i % CHUNK !== 0) this.own(keep).length = i % CHUNK;
    this.size = i;
    for (const item of after) this.push(item);
  }

  /** The new list; the builder is not used after this. */
  done(): ChunkList<T> {
    return { chunks: this.chunks, length: this.size };
  }
}
