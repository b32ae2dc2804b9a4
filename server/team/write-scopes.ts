import { AppError } from "../errors";
import { checkRelativePath, MAX_PATH_LENGTH, pathWithin } from "../workspace/paths";

// Write scopes are advisory path prefixes on tasks (SPEC.md §8): never locks, only the
// source of overlap warnings. Stored normalised, so comparison is plain string work.
//
// The path rules are the workspace's (workspace/paths.ts): a scope is a relative directory or
// file prefix, so `./src/` → `src`, and anything a file path may not be, a scope may not be.

export const MAX_WRITE_SCOPE_LENGTH = MAX_PATH_LENGTH;

/** A repository-relative path prefix in canonical form (`src/app`), or TEAM_INVALID_WRITE_SCOPE. */
export function normaliseWriteScope(raw: string): string {
  const checked = checkRelativePath(raw, "prefix");
  if (checked.ok) return checked.path;
  throw new AppError("TEAM_INVALID_WRITE_SCOPE", `Invalid write scope ${JSON.stringify(raw)}: ${checked.reason}`, {
    scope: raw,
    reason: checked.reason,
  });
}

/** Normalises a list, dropping duplicates after normalisation (first occurrence wins). */
export function normaliseWriteScopes(raw: readonly string[]): string[] {
  return [...new Set(raw.map(normaliseWriteScope))];
}

/**
 * Two normalised scopes overlap when equal or when one is a path-component prefix of the
 * other: `src` overlaps `src/app`, but not `srcs`.
 */
export function scopesOverlap(a: string, b: string): boolean {
  return pathWithin(a, b) || pathWithin(b, a);
}
