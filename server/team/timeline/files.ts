import type { DbOrTx } from "../../db/client";
import type { SessionId } from "../../ids";
import { listWorkspaceChanges, type FileChangeView } from "../../workspace";
import { FILES, orderKey, type Plan, type Sourced } from "./sources";

// The workspace's part of the timeline: each new version of a file as a file entry.

/** Pages of the workspace's changes one read goes through looking for a member filter's. */
const FILE_SCAN_PAGES = 10;

export function fileEntry(c: FileChangeView): Sourced {
  return {
    source: FILES,
    pos: c.change,
    entry: {
      id: `w:${c.change}`,
      order: orderKey(c.createdAt, FILES, c.change),
      at: c.createdAt,
      member: c.author.kind === "member" ? c.author.name : null,
      seq: null,
      kind: "file",
      path: c.path,
      version: c.version,
      deleted: c.deleted,
      bytes: c.bytes,
      by: c.author,
      taskIds: c.taskIds,
      warnings: c.warnings,
    },
  };
}

export const fileCounts = (p: Plan) => (c: FileChangeView) => !p.filesOf || (c.author.kind === "member" && p.filesOf.has(c.author.name));

/**
 * Up to `limit` file changes below `bound`, newest first. With a member filter, pages are read
 * until enough match, the history ends, or FILE_SCAN_PAGES were read; `floor` is then the
 * lowest change looked at, `newest` the newest change seen.
 */
export async function readOlderFiles(db: DbOrTx, teamId: SessionId, p: Plan, bound: number, limit: number) {
  const rows: Sourced[] = [];
  let floor = bound;
  let newest = 0;
  let exhausted = false;
  for (let n = 0; n < FILE_SCAN_PAGES && rows.length < limit; n++) {
    const page = await listWorkspaceChanges(db, teamId, { beforeChange: floor, limit });
    newest ||= page.at(-1)?.change ?? 0;
    rows.push(...page.filter(fileCounts(p)).reverse().map(fileEntry));
    exhausted = page.length < limit;
    if (exhausted) break;
    floor = page[0]!.change;
  }
  // Matches beyond `limit` are left for the next page (below the lowest taken one).
  return { rows: rows.slice(0, limit), floor, newest, exhausted: exhausted && rows.length <= limit };
}
