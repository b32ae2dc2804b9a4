import { AppError } from "../errors";

// Write scopes are advisory path prefixes on tasks (SPEC.md §8): never locks, only the
// source of overlap warnings. Stored normalised, so comparison is plain string work.
//
// Rules (where SPEC.md is silent, the choice is written here):
// - Surrounding whitespace is trimmed; the scope is otherwise case-sensitive.
// - Backslashes are path separators (`src\app` → `src/app`), so Windows-style input works and
//   every stored scope uses `/` only.
// - `.` segments are dropped (`./src/` → `src`, `src/./app` → `src/app`); a scope that is
//   nothing but `.` segments is rejected like `.`.
// - One trailing separator is removed (`src/` → `src`); any other empty segment (`a//b`,
//   `src//`) is rejected.
// - Rejected: empty, `.`, `..`, any `..` segment (traversal), absolute (`/x`, `\x`, `~`,
//   `~/x`, `~user/x`), drive-lettered (`C:\x`, `c:/x`, `c:x`), control characters, and scopes
//   longer than MAX_WRITE_SCOPE_LENGTH characters.

export const MAX_WRITE_SCOPE_LENGTH = 1024;

function invalid(raw: string, reason: string): AppError {
  return new AppError("TEAM_INVALID_WRITE_SCOPE", `Invalid write scope ${JSON.stringify(raw)}: ${reason}`, {
    scope: raw,
    reason,
  });
}

/** A repository-relative path prefix in canonical form (`src/app`), or TEAM_INVALID_WRITE_SCOPE. */
export function normaliseWriteScope(raw: string): string {
  const trimmed = raw.trim();
  if (trimmed === "") throw invalid(raw, "it is empty");
  if (trimmed.length > MAX_WRITE_SCOPE_LENGTH) {
    throw invalid(raw, `it is longer than ${MAX_WRITE_SCOPE_LENGTH} characters`);
  }
  if (/[\u0000-\u001f\u007f]/.test(trimmed)) throw invalid(raw, "it contains control characters");
  const path = trimmed.replaceAll("\\", "/");
  if (/^[A-Za-z]:/.test(path)) throw invalid(raw, "it has a drive letter; use a repository-relative path");
  if (path.startsWith("/")) throw invalid(raw, "it is absolute; use a repository-relative path");
  if (path.startsWith("~")) throw invalid(raw, "it is home-relative; use a repository-relative path");

  const segments = (path.endsWith("/") ? path.slice(0, -1) : path).split("/");
  if (segments.includes("")) throw invalid(raw, "it has an empty path segment");
  if (segments.includes("..")) throw invalid(raw, "it contains '..' (path traversal)");
  const kept = segments.filter((s) => s !== ".");
  if (kept.length === 0) throw invalid(raw, "it names the repository root ('.'); name a directory or file");
  return kept.join("/");
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
  return a === b || b.startsWith(`${a}/`) || a.startsWith(`${b}/`);
}
