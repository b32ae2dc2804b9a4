import type { ApiError } from "../api-types";
import { appCodeOf } from "../app-error";
import { formatBytes } from "./tree-model";

// Why a change to a file was refused, in words for the person who tried (the codes are the
// server's, server/errors.ts), and the one refusal the Files view answers with a conflict.

type Refusal = Pick<ApiError, "data" | "message">;

const detail = (e: Refusal, key: string): unknown => (e.data?.details as Record<string, unknown> | null | undefined)?.[key];
const count = (v: unknown): number | null => (typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : null);

/**
 * When a change was refused because the person saw an older version: the version the file is
 * at now (0: there is no file there now) and its path as the server normalised it. Null for any
 * other refusal.
 */
export function staleOf(e: Refusal | null | undefined): { currentVersion: number; path: string | null } | null {
  if (!e || appCodeOf(e) !== "WORKSPACE_STALE_VERSION") return null;
  const path = detail(e, "path");
  return { currentVersion: count(detail(e, "currentVersion")) ?? 0, path: typeof path === "string" ? path : null };
}

/** A readable sentence for a refused change (a stale version has its own conflict panel). */
export function fileErrorText(e: Refusal): string {
  switch (appCodeOf(e)) {
    case "WORKSPACE_PATH_INVALID": {
      // The path rules' reason ("it contains '..'"), or a file/folder clash the message names.
      const reason = detail(e, "reason");
      return `That path cannot be used: ${typeof reason === "string" ? reason : e.message}.`;
    }
    case "WORKSPACE_FILE_TOO_LARGE": {
      const bytes = count(detail(e, "bytes"));
      const limit = count(detail(e, "limit"));
      return bytes !== null && limit !== null
        ? `The file is too large: ${formatBytes(bytes)}, and a file may hold at most ${formatBytes(limit)}. Nothing was saved.`
        : `The file is too large. Nothing was saved.`;
    }
    case "WORKSPACE_FULL":
      return `The workspace is full: nothing was saved. ${e.message}.`;
    case "WORKSPACE_NOT_FOUND":
      return "That file is not there any more (it was deleted). Nothing was changed.";
    case "WORKSPACE_STALE_VERSION":
      return "The file changed since you opened it. Nothing was saved.";
    case "FORBIDDEN":
      return "Your role in this team cannot change files.";
    case "INVALID_INPUT":
      return `Not saved: ${e.message}`;
    case null:
      return "The server could not be reached. Nothing was saved; try again.";
    default:
      return e.message;
  }
}
