import { z } from "zod";
import { KiB } from "./limits";

// One validation layer for what Postgres cannot store or count, for every boundary (tRPC
// input, tool input): text with a NUL character or a lone UTF-16 surrogate (text and jsonb
// columns refuse both), and integers outside the int4 columns' range. A refusal happens
// before any write, so it persists nothing.

export const INT4_MAX = 2_147_483_647;

/** An integer that fits an int4 column (seqs, revisions). */
export const int4 = (min = 0) => z.number().int().min(min).max(INT4_MAX);

/** A decimal string naming an int4 value (SSE's Last-Event-ID). */
export const int4String = z
  .string()
  .regex(/^\d{1,10}$/, "a decimal number")
  .refine((s) => Number(s) <= INT4_MAX, "out of range");

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function textProblem(s: string): string | null {
  if (s.includes("\u0000")) return "contains a NUL character";
  if (LONE_SURROGATE.test(s)) return "contains a lone surrogate (invalid UTF-16)";
  return null;
}

/** The first string (value or key, at any depth) Postgres could not store, with its path. */
export function findUnstorableText(value: unknown, path = "input", depth = 0): string | null {
  if (typeof value === "string") {
    const problem = textProblem(value);
    return problem ? `${path} ${problem}` : null;
  }
  if (depth > 32 || value === null || typeof value !== "object") return null;
  for (const [key, v] of Object.entries(value)) {
    const keyProblem = textProblem(key);
    if (keyProblem) return `a key in ${path} ${keyProblem}`;
    const found = findUnstorableText(v, Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`, depth + 1);
    if (found) return found;
  }
  return null;
}

export const utf8Bytes = (text: string): number => Buffer.byteLength(text, "utf8");

/** Non-empty text of at most `maxBytes` UTF-8 bytes (after trimming, when `trim`). */
export function boundedText(maxBytes: number, label: string, opts: { trim?: boolean } = {}) {
  const base = opts.trim ? z.string().trim() : z.string();
  const tooLarge = `${label} is larger than ${maxBytes / KiB} KiB`;
  // A string has at most as many UTF-16 units as UTF-8 bytes, so the `max` refuses nothing the
  // byte check accepts; it puts the bound into the tools' JSON schema and saves counting.
  return base
    .min(1, `${label} is empty`)
    .max(maxBytes, { message: tooLarge, abort: true })
    .refine((t) => utf8Bytes(t) <= maxBytes, tooLarge);
}
