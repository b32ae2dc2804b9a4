// Relative paths in a team's workspace, and the rules they share with the board's write scopes
// (SPEC.md §8, §14): one definition, so a scope and a file path can never disagree about what
// `./src/` means. Callers wrap the reason in their own error code.
//
// Rules (where SPEC.md is silent, the choice is written here):
// - Surrounding whitespace is trimmed; paths are otherwise case-sensitive.
// - Backslashes are path separators (`src\app` → `src/app`), so Windows-style input works and
//   every stored path uses `/` only.
// - `.` segments are dropped (`./src/` → `src`, `src/./app` → `src/app`); a path that is
//   nothing but `.` segments names the root and is rejected.
// - One trailing separator is removed (`src/` → `src`) where a directory is meant (scopes,
//   prefixes); a file path may not end with one. Any other empty segment (`a//b`) is rejected.
// - Rejected: empty, `..` segments (traversal), absolute (`/x`, `\x`, `~`, `~/x`), drive-lettered
//   (`C:\x`, `c:/x`, `c:x`), control characters (C0 and C1), invisible or direction-changing
//   characters (zero-width, bidi overrides: names that look like other names), longer than
//   MAX_PATH_LENGTH characters.
// - Unicode is normalised to NFC, so `é` typed either way names one file.

export const MAX_PATH_LENGTH = 1024;

export type PathCheck = { ok: true; path: string } | { ok: false; reason: string };

/** `kind`: a `prefix` names a directory (a trailing `/` is allowed), a `file` does not. */
export function checkRelativePath(raw: string, kind: "prefix" | "file"): PathCheck {
  const fail = (reason: string): PathCheck => ({ ok: false, reason });
  const trimmed = raw.normalize("NFC").trim();
  if (trimmed === "") return fail("it is empty");
  if (trimmed.length > MAX_PATH_LENGTH) return fail(`it is longer than ${MAX_PATH_LENGTH} characters`);
  if (/[\u0000-\u001f\u007f-\u009f]/.test(trimmed)) return fail("it contains control characters");
  if (/[\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/.test(trimmed)) return fail("it contains invisible or direction-changing characters");
  const path = trimmed.replaceAll("\\", "/");
  if (/^[A-Za-z]:/.test(path)) return fail("it has a drive letter; use a relative path");
  if (path.startsWith("/")) return fail("it is absolute; use a relative path");
  if (path.startsWith("~")) return fail("it is home-relative; use a relative path");
  if (kind === "file" && path.endsWith("/")) return fail("it ends with '/', which names a directory, not a file");

  const segments = (path.endsWith("/") ? path.slice(0, -1) : path).split("/");
  if (segments.includes("")) return fail("it has an empty path segment");
  if (segments.includes("..")) return fail("it contains '..' (path traversal)");
  const kept = segments.filter((s) => s !== ".");
  if (kept.length === 0) return fail("it names the root ('.'); name a directory or file");
  return { ok: true, path: kept.join("/") };
}

/** A normalised path lies within a normalised scope when equal to it or under it. */
export function pathWithin(path: string, scope: string): boolean {
  return path === scope || path.startsWith(`${scope}/`);
}
