import { z } from "zod";
import type { Tx } from "../db/client";
import type { SessionId } from "../ids";

// An ordinary fork starts a new team with the workspace as it was at the fork point (SPEC.md
// §14): every change up to that moment, history and authors included, so the fork's files
// match the transcript it starts from. A fork teammate needs nothing: it is in the same team.

const CutRow = z.object({ change: z.number().int().nullable() });
const CutRows = z.array(CutRow);

/**
 * Copies the changes of `from`'s workspace made at or before `asOf` (the event-log clock of the
 * fork point's turn end) into the new, empty workspace of `to`. Changes are serialised per
 * workspace, so the copied ones are a prefix of its history: cut at the newest change by then.
 */
export async function copyWorkspaceAsOf(tx: Tx, from: SessionId, to: SessionId, asOf: Date): Promise<void> {
  const cut = CutRows.parse(
    await tx.$queryRaw`SELECT max(change) AS change FROM workspace_versions WHERE team_id = ${from} AND created_at <= ${asOf}`,
  )[0]?.change;
  if (cut === null || cut === undefined) return;
  await tx.$executeRaw`INSERT INTO workspace_versions (team_id, path, version, change, blob_sha, bytes, author, task_ids, warnings, created_at)
    SELECT ${to}, path, version, change, blob_sha, bytes, author, task_ids, warnings, created_at
    FROM workspace_versions WHERE team_id = ${from} AND change <= ${cut}`;
  await tx.$executeRaw`INSERT INTO workspace_files (team_id, path, version, blob_sha, bytes)
    SELECT DISTINCT ON (path) team_id, path, version, blob_sha, bytes
    FROM workspace_versions WHERE team_id = ${to} ORDER BY path, version DESC`;
  await tx.$executeRaw`INSERT INTO workspaces (team_id, file_count, total_bytes, last_change)
    SELECT ${to}, count(*) FILTER (WHERE blob_sha IS NOT NULL), coalesce(sum(bytes) FILTER (WHERE blob_sha IS NOT NULL), 0), ${cut}
    FROM workspace_files WHERE team_id = ${to}`;
}
