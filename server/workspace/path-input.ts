import { AppError } from "../errors";
import { checkRelativePath } from "./paths";

// Paths as the workspace takes them from a tool or a request: the shared rules (paths.ts)
// with the workspace's error code.

function invalid(raw: string, reason: string): AppError {
  return new AppError("WORKSPACE_PATH_INVALID", `Invalid path ${JSON.stringify(raw)}: ${reason}`, { path: raw, reason });
}

/** A file path in canonical form (`src/app.ts`), or WORKSPACE_PATH_INVALID. */
export function normaliseFilePath(raw: string): string {
  const checked = checkRelativePath(raw, "file");
  if (!checked.ok) throw invalid(raw, checked.reason);
  return checked.path;
}

/** A directory prefix in canonical form; blank (or `.`) means the whole workspace (null). */
export function normalisePrefix(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const trimmed = raw.trim();
  if (trimmed === "" || trimmed === "." || trimmed === "./") return null;
  const checked = checkRelativePath(raw, "prefix");
  if (!checked.ok) throw invalid(raw, checked.reason);
  return checked.path;
}
