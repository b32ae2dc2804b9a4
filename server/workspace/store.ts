import { createHash } from "node:crypto";
import { z } from "zod";
import { inTx, type DbOrTx, type Tx } from "../db/client";
import { AppError } from "../errors";
import type { SessionId } from "../ids";
import { utf8Bytes } from "../../shared/input-guard";
import type { WorkspaceLimits } from "../../shared/limits";
import { notifyActivity } from "../db/notify";
import { authorOf, checkScopes, recordPersonChange, type Writer } from "./authors";
import { normaliseFilePath } from "./path-input";
import { underPrefix } from "./prefix";
import { Prisma } from "../db/generated/client";
import type { ChangeResult } from "./schema";

// Changing a workspace (SPEC.md §14): write, edit, delete. Every change runs in one
// transaction that locks the workspace's counters row first, so the changes of one workspace
// are serialised: versions and change numbers have no gaps, limits are checked against the
// real totals, and a compare-and-set sees the head it compares. Called inside a tool's
// `ctx.commit`, the change commits with the tool_result that reports it, or not at all.

/** A `workspaces` row: the counters every change locks and the summary reads. */
export const CounterRow = z.object({ file_count: z.number().int(), total_bytes: z.coerce.number().int(), last_change: z.number().int() });
export const CounterRows = z.array(CounterRow);
const HeadRow = z.object({ version: z.number().int(), blob_sha: z.string().nullable(), bytes: z.number().int() });
const HeadRows = z.array(HeadRow);
const ContentRow = z.object({ content: z.string() });
const ContentRows = z.array(ContentRow);

/** The locked counters of `teamId`'s workspace (made on first use). */
async function lockWorkspace(tx: Tx, teamId: SessionId) {
  const rows = await tx.$queryRaw`INSERT INTO workspaces (team_id) VALUES (${teamId})
    ON CONFLICT (team_id) DO UPDATE SET team_id = EXCLUDED.team_id
    RETURNING file_count, total_bytes, last_change`;
  return CounterRows.parse(rows)[0]!;
}

type Head = z.infer<typeof HeadRow> & { live: boolean };

async function headOf(tx: Tx, teamId: SessionId, path: string): Promise<Head | null> {
  const row = HeadRows.parse(
    await tx.$queryRaw`SELECT version, blob_sha, bytes FROM workspace_files WHERE team_id = ${teamId} AND path = ${path}`,
  )[0];
  return row ? { ...row, live: row.blob_sha !== null } : null;
}

export async function contentOf(tx: DbOrTx, sha: string): Promise<string> {
  return ContentRows.parse(await tx.$queryRaw`SELECT content FROM workspace_blobs WHERE sha256 = ${sha}`)[0]!.content;
}

export function notFound(path: string, head: { version: number } | null): AppError {
  return new AppError(
    "WORKSPACE_NOT_FOUND",
    head ? `${path} was deleted (version ${head.version}); write it to create it again` : `No file at ${path}`,
    { path },
  );
}

function tooLarge(path: string, bytes: number, limits: WorkspaceLimits): AppError {
  return new AppError("WORKSPACE_FILE_TOO_LARGE", `${path} would be ${bytes} bytes; a file holds at most ${limits.maxFileBytes}`, {
    path,
    bytes,
    limit: limits.maxFileBytes,
  });
}

function staleVersion(path: string, expected: number, head: Head | null): AppError {
  const now = head?.live ? `version ${head.version}` : head ? `deleted at version ${head.version}` : "no file";
  return new AppError("WORKSPACE_STALE_VERSION", `${path} is at ${now}, not version ${expected}; read it again`, {
    path,
    expectedVersion: expected,
    currentVersion: head?.live ? head.version : 0,
  });
}

const PathRows = z.array(z.object({ path: z.string() }));

/** A live file may not be a directory of another, nor lie under one (`a` and `a/b`). */
async function assertNoDirectoryClash(tx: Tx, teamId: SessionId, path: string): Promise<void> {
  const parents = path.split("/").slice(0, -1).map((_, i, all) => all.slice(0, i + 1).join("/"));
  const rows = PathRows.parse(
    await tx.$queryRaw`SELECT path FROM workspace_files
      WHERE team_id = ${teamId} AND blob_sha IS NOT NULL
        AND (path = ANY(${parents}::text[]) OR (${underPrefix(path, Prisma.raw("path"))} AND path <> ${path}))
      LIMIT 1`,
  );
  const clash = rows[0]?.path;
  if (clash === undefined) return;
  throw new AppError(
    "WORKSPACE_PATH_INVALID",
    parents.includes(clash) ? `${path} cannot be created: ${clash} is a file, not a directory` : `${path} cannot be a file: it is a directory (${clash} is in it)`,
    { path, clash },
  );
}

interface Change {
  teamId: SessionId;
  path: string;
  writer: Writer;
  limits: WorkspaceLimits;
}

/** The new content of a path (with its sha256), or null to delete it. */
async function commitChange(
  tx: Tx,
  c: Change,
  head: Head | null,
  counters: z.infer<typeof CounterRow>,
  next: { content: string; sha: string } | null,
  extra: Partial<ChangeResult> = {},
): Promise<ChangeResult> {
  const content = next?.content ?? null;
  const bytes = content === null ? 0 : utf8Bytes(content);
  const wasLive = head?.live ?? false;
  // Only growth is refused: a file or workspace over a lowered limit can still shrink.
  if (bytes > c.limits.maxFileBytes && bytes > (wasLive ? head!.bytes : 0)) {
    throw tooLarge(c.path, bytes, c.limits);
  }
  const fileCount = counters.file_count + (content === null ? -1 : wasLive ? 0 : 1);
  const totalBytes = counters.total_bytes - (wasLive ? head!.bytes : 0) + bytes;
  if (fileCount > c.limits.maxFiles && fileCount > counters.file_count) {
    throw new AppError("WORKSPACE_FULL", `The workspace holds its maximum of ${c.limits.maxFiles} files; delete some first`, { limit: c.limits.maxFiles });
  }
  if (totalBytes > c.limits.maxBytes && totalBytes > counters.total_bytes) {
    throw new AppError("WORKSPACE_FULL", `The workspace would hold ${totalBytes} bytes; it holds at most ${c.limits.maxBytes}; delete or shrink files first`, {
      limit: c.limits.maxBytes,
    });
  }
  if (content !== null && !wasLive) await assertNoDirectoryClash(tx, c.teamId, c.path);

  const scopes = await checkScopes(tx, c.teamId, c.writer, c.path);
  const sha = next?.sha ?? null;
  if (content !== null) {
    await tx.$executeRaw`INSERT INTO workspace_blobs (sha256, content, bytes) VALUES (${sha}, ${content}, ${bytes}) ON CONFLICT (sha256) DO NOTHING`;
  }
  const version = (head?.version ?? 0) + 1;
  const change = counters.last_change + 1;
  // The event log's clock (session-log.ts): a fork compares versions with its turn ends.
  const at = new Date();
  await tx.$executeRaw`INSERT INTO workspace_versions (team_id, path, version, change, blob_sha, bytes, author, task_ids, warnings, created_at)
    VALUES (${c.teamId}, ${c.path}, ${version}, ${change}, ${sha}, ${bytes}, ${JSON.stringify(authorOf(c.writer))}::jsonb,
      ${scopes.taskIds}::text[], ${scopes.warnings}::text[], ${at})`;
  await tx.$executeRaw`INSERT INTO workspace_files (team_id, path, version, blob_sha, bytes) VALUES (${c.teamId}, ${c.path}, ${version}, ${sha}, ${bytes})
    ON CONFLICT (team_id, path) DO UPDATE SET version = EXCLUDED.version, blob_sha = EXCLUDED.blob_sha, bytes = EXCLUDED.bytes`;
  await tx.$executeRaw`UPDATE workspaces SET file_count = ${fileCount}, total_bytes = ${totalBytes}, last_change = ${change} WHERE team_id = ${c.teamId}`;
  await recordPersonChange(tx, c.writer, { path: c.path, version, deleted: content === null });
  await notifyActivity(tx, c.teamId, "workspace");
  return { path: c.path, version, change, bytes, deleted: content === null, unchanged: false, warnings: scopes.warnings, ...extra };
}

function unchanged(path: string, head: Head, counters: z.infer<typeof CounterRow>, extra: Partial<ChangeResult> = {}): ChangeResult {
  return { path, version: head.version, change: counters.last_change, bytes: head.bytes, deleted: false, unchanged: true, warnings: [], ...extra };
}

/** Runs `fn` on a path's head with the workspace locked: every change starts here. */
async function changing<T>(
  db: DbOrTx,
  teamId: SessionId,
  rawPath: string,
  fn: (tx: Tx, path: string, head: Head | null, counters: z.infer<typeof CounterRow>) => Promise<T>,
): Promise<T> {
  const path = normaliseFilePath(rawPath);
  return inTx(db, async (tx) => {
    const counters = await lockWorkspace(tx, teamId);
    return fn(tx, path, await headOf(tx, teamId, path), counters);
  });
}

export interface WriteRequest {
  path: string;
  content: string;
  /** Compare-and-set: the version the writer saw (0: no live file). Absent: write whatever is there. */
  expectedVersion?: number;
}

/** Creates or replaces a file. Content equal to the current version's writes nothing. */
export async function writeFile(db: DbOrTx, teamId: SessionId, writer: Writer, req: WriteRequest, limits: WorkspaceLimits): Promise<ChangeResult> {
  return changing(db, teamId, req.path, async (tx, path, head, counters) => {
    if (req.expectedVersion !== undefined) {
      const current = head?.live ? head.version : 0;
      // A deleted file's tombstone version is what the writer saw, as much as 0 is.
      const matches = req.expectedVersion === current || (head !== null && !head.live && req.expectedVersion === head.version);
      if (!matches) throw staleVersion(path, req.expectedVersion, head);
    }
    const sha = sha256(req.content);
    if (head?.live && head.blob_sha === sha) return unchanged(path, head, counters);
    return commitChange(tx, { teamId, path, writer, limits }, head, counters, { content: req.content, sha });
  });
}

export interface EditRequest {
  path: string;
  oldText: string;
  newText: string;
  replaceAll?: boolean;
}

/** Replaces `oldText`, which must occur exactly once (or at least once with `replaceAll`). */
export async function editFile(db: DbOrTx, teamId: SessionId, writer: Writer, req: EditRequest, limits: WorkspaceLimits): Promise<ChangeResult> {
  return changing(db, teamId, req.path, async (tx, path, head, counters) => {
    if (!head?.live) throw notFound(path, head);
    const content = await contentOf(tx, head.blob_sha!);
    const parts = content.split(req.oldText);
    const count = parts.length - 1;
    if (count === 0) {
      throw new AppError("WORKSPACE_EDIT_NOT_FOUND", `old_text does not occur in ${path} (version ${head.version}); read the file and copy the text exactly`, {
        path,
        version: head.version,
      });
    }
    if (count > 1 && !req.replaceAll) {
      throw new AppError(
        "WORKSPACE_EDIT_NOT_UNIQUE",
        `old_text occurs ${count} times in ${path} (version ${head.version}); include more surrounding text, or set replace_all`,
        { path, version: head.version, count },
      );
    }
    // The new size is known before the text is built: an edit that would blow the limit (or
    // the process's memory, with replace_all) is refused without building it.
    const replaced = req.replaceAll ? count : 1;
    const size = utf8Bytes(content) + replaced * (utf8Bytes(req.newText) - utf8Bytes(req.oldText));
    if (size > limits.maxFileBytes && size > head.bytes) throw tooLarge(path, size, limits);
    const next = req.replaceAll ? parts.join(req.newText) : parts[0] + req.newText + parts.slice(1).join(req.oldText);
    if (next === content) return unchanged(path, head, counters, { replacements: count });
    return commitChange(tx, { teamId, path, writer, limits }, head, counters, { content: next, sha: sha256(next) }, { replacements: count });
  });
}

/** Deletes a file, keeping a tombstone version; `expectedVersion` must be its current version. */
export async function deleteFile(
  db: DbOrTx,
  teamId: SessionId,
  writer: Writer,
  req: { path: string; expectedVersion: number },
  limits: WorkspaceLimits,
): Promise<ChangeResult> {
  return changing(db, teamId, req.path, async (tx, path, head, counters) => {
    if (!head?.live) throw notFound(path, head);
    if (head.version !== req.expectedVersion) throw staleVersion(path, req.expectedVersion, head);
    return commitChange(tx, { teamId, path, writer, limits }, head, counters, null);
  });
}

export function sha256(content: string): string {
  return createHash("sha256").update(content, "utf8").digest("hex");
}

