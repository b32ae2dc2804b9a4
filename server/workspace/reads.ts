import { z } from "zod";
import { inTx, type DbOrTx } from "../db/client";
import { sqlStateOf } from "../db/errors";
import { Prisma } from "../db/generated/client";
import { AppError } from "../errors";
import type { SessionId } from "../ids";
import { LIMITS } from "../limits";
import { normaliseFilePath, normalisePrefix } from "./path-input";
import {
  AuthorSchema,
  FileContentSchema,
  type FileChangeView,
  type FileContent,
  type FileEntry,
  type FilePage,
  type SearchResult,
  type VersionView,
  type WorkspaceSummary,
} from "./schema";
import { contentOf, notFound } from "./store";

// Reading a workspace: listings (path order, byte-wise), a file or one of its versions, its
// history, the team's changes in order, and search. Rows read back are parsed with zod.

/** Files at or under `prefix` (a directory, or a file itself). */
export function underPrefix(prefix: string | null, column = Prisma.raw("f.path")): Prisma.Sql {
  if (prefix === null) return Prisma.sql`TRUE`;
  return Prisma.sql`(${column} = ${prefix} OR (${column} >= ${`${prefix}/`} AND ${column} < ${`${prefix}0`}))`;
}

const EntryRow = z.object({ path: z.string(), version: z.number().int(), bytes: z.number().int(), author: AuthorSchema, created_at: z.date() });

export async function listFiles(
  db: DbOrTx,
  teamId: SessionId,
  q: { prefix?: string; cursor?: string; limit?: number } = {},
): Promise<FilePage> {
  const prefix = normalisePrefix(q.prefix);
  const limit = q.limit ?? LIMITS.workspaceListDefault;
  const after = q.cursor === undefined ? Prisma.sql`TRUE` : Prisma.sql`f.path > ${q.cursor}`;
  const rows = z.array(EntryRow).parse(
    await db.$queryRaw`SELECT f.path, f.version, f.bytes, v.author, v.created_at
      FROM workspace_files f JOIN workspace_versions v ON v.team_id = f.team_id AND v.path = f.path AND v.version = f.version
      WHERE f.team_id = ${teamId} AND f.blob_sha IS NOT NULL AND ${underPrefix(prefix)} AND ${after}
      ORDER BY f.path LIMIT ${limit + 1}`,
  );
  const files: FileEntry[] = rows.slice(0, limit).map((r) => ({ path: r.path, version: r.version, bytes: r.bytes, author: r.author, changedAt: r.created_at }));
  return { files, nextCursor: rows.length > limit ? files.at(-1)!.path : undefined };
}

const VersionRow = z.object({
  path: z.string(),
  version: z.number().int(),
  change: z.number().int(),
  blob_sha: z.string().nullable(),
  bytes: z.number().int(),
  author: AuthorSchema,
  task_ids: z.array(z.string()).nullable(),
  warnings: z.array(z.string()).nullable(),
  created_at: z.date(),
});
const VERSION_COLUMNS = Prisma.sql`path, version, change, blob_sha, bytes, author, task_ids, warnings, created_at`;

function toVersion(r: z.infer<typeof VersionRow>): VersionView {
  return {
    path: r.path,
    version: r.version,
    change: r.change,
    deleted: r.blob_sha === null,
    bytes: r.bytes,
    author: r.author,
    taskIds: r.task_ids ?? [],
    warnings: r.warnings ?? [],
    createdAt: r.created_at,
  };
}

/** A file's versions, newest first (tombstones included). Unknown path: WORKSPACE_NOT_FOUND. */
export async function fileHistory(db: DbOrTx, teamId: SessionId, rawPath: string, q: { limit?: number } = {}): Promise<VersionView[]> {
  const path = normaliseFilePath(rawPath);
  const rows = z.array(VersionRow).parse(
    await db.$queryRaw`SELECT ${VERSION_COLUMNS} FROM workspace_versions WHERE team_id = ${teamId} AND path = ${path}
      ORDER BY version DESC LIMIT ${q.limit ?? LIMITS.workspaceListMax}`,
  );
  if (rows.length === 0) throw notFound(path, null);
  return rows.map(toVersion);
}

/** The team's changes in change order (the timeline reads them). */
export async function listWorkspaceChanges(
  db: DbOrTx,
  teamId: SessionId,
  opts: { afterChange?: number; beforeChange?: number; limit?: number } = {},
): Promise<FileChangeView[]> {
  const limit = opts.limit ?? LIMITS.workspaceListDefault;
  const after = opts.afterChange === undefined ? Prisma.sql`TRUE` : Prisma.sql`change > ${opts.afterChange}`;
  const before = opts.beforeChange === undefined ? Prisma.sql`TRUE` : Prisma.sql`change < ${opts.beforeChange}`;
  // Paging backwards (only `before`) takes the newest page; the page is returned oldest first.
  const backwards = opts.beforeChange !== undefined && opts.afterChange === undefined;
  const rows = z.array(VersionRow).parse(
    await db.$queryRaw`SELECT ${VERSION_COLUMNS} FROM workspace_versions WHERE team_id = ${teamId} AND ${after} AND ${before}
      ORDER BY change ${backwards ? Prisma.sql`DESC` : Prisma.sql`ASC`} LIMIT ${limit}`,
  );
  const views = rows.map(toVersion);
  return backwards ? views.reverse() : views;
}

/**
 * A file's content with its version: the head, or `version` (a deleted version is
 * WORKSPACE_NOT_FOUND). Lines are 1-based and inclusive; without a range, whole lines up to
 * the read limit, `truncated` saying there is more.
 */
export async function readFile(
  db: DbOrTx,
  teamId: SessionId,
  q: { path: string; version?: number; startLine?: number; endLine?: number },
): Promise<FileContent> {
  const path = normaliseFilePath(q.path);
  const rows = z.array(VersionRow).parse(
    q.version === undefined
      ? await db.$queryRaw`SELECT ${VERSION_COLUMNS} FROM workspace_versions v
          WHERE team_id = ${teamId} AND path = ${path} AND version = (SELECT version FROM workspace_files WHERE team_id = ${teamId} AND path = ${path})`
      : await db.$queryRaw`SELECT ${VERSION_COLUMNS} FROM workspace_versions WHERE team_id = ${teamId} AND path = ${path} AND version = ${q.version}`,
  );
  const row = rows[0];
  if (!row || row.blob_sha === null) {
    if (q.version !== undefined && row) throw new AppError("WORKSPACE_NOT_FOUND", `Version ${q.version} of ${path} is its deletion`, { path });
    if (q.version !== undefined) throw new AppError("WORKSPACE_NOT_FOUND", `${path} has no version ${q.version}`, { path });
    throw notFound(path, row ?? null);
  }
  const full = await contentOf(db, row.blob_sha);
  const lines = full.split("\n");
  const totalLines = lines.length;
  const startLine = q.startLine ?? 1;
  let endLine = Math.min(q.endLine ?? totalLines, totalLines);
  let truncated = false;
  if (q.startLine === undefined && q.endLine === undefined && Buffer.byteLength(full, "utf8") > LIMITS.workspaceReadBytes) {
    // Whole lines up to the read limit (at least one line, even a long one).
    let used = 0;
    endLine = 0;
    while (endLine < totalLines && (endLine === 0 || used + Buffer.byteLength(lines[endLine]!, "utf8") + 1 <= LIMITS.workspaceReadBytes)) {
      used += Buffer.byteLength(lines[endLine]!, "utf8") + 1;
      endLine++;
    }
    truncated = endLine < totalLines;
  }
  const content = startLine === 1 && endLine === totalLines ? full : lines.slice(startLine - 1, Math.max(endLine, startLine - 1)).join("\n");
  return FileContentSchema.parse({
    path,
    version: row.version,
    bytes: row.bytes,
    content,
    author: row.author,
    changedAt: row.created_at,
    startLine,
    endLine: Math.max(endLine, startLine - 1),
    totalLines,
    truncated,
  });
}

const SummaryRow = z.object({ file_count: z.number().int(), total_bytes: z.coerce.number().int(), last_change: z.number().int() });

export async function workspaceSummary(db: DbOrTx, teamId: SessionId): Promise<WorkspaceSummary> {
  const row = z.array(SummaryRow).parse(await db.$queryRaw`SELECT file_count, total_bytes, last_change FROM workspaces WHERE team_id = ${teamId}`)[0];
  return { files: row?.file_count ?? 0, bytes: row?.total_bytes ?? 0, lastChange: row?.last_change ?? 0 };
}

const MatchRow = z.object({ path: z.string(), line: z.coerce.number().int(), text: z.string() });

/**
 * Lines matching `query` (literal text, or a PostgreSQL regular expression with `regex`) in
 * live files at or under `prefix`, in path and line order. Postgres does the matching, under a
 * statement timeout, so a hostile pattern costs bounded time and never blocks this process.
 */
export async function searchFiles(
  db: DbOrTx,
  teamId: SessionId,
  q: { query: string; regex?: boolean; ignoreCase?: boolean; prefix?: string; limit?: number },
): Promise<SearchResult> {
  const prefix = normalisePrefix(q.prefix);
  const limit = q.limit ?? LIMITS.workspaceSearchDefault;
  const test = q.regex
    ? q.ignoreCase
      ? Prisma.sql`l.line ~* ${q.query}`
      : Prisma.sql`l.line ~ ${q.query}`
    : q.ignoreCase
      ? Prisma.sql`strpos(lower(l.line), lower(${q.query})) > 0`
      : Prisma.sql`strpos(l.line, ${q.query}) > 0`;
  try {
    const rows = await inTx(db, async (tx) => {
      await tx.$executeRaw`SET LOCAL statement_timeout = '5s'`;
      return z.array(MatchRow).parse(
        await tx.$queryRaw`SELECT f.path, l.n AS line, left(l.line, ${LIMITS.workspaceMatchChars}) AS text
          FROM workspace_files f JOIN workspace_blobs b ON b.sha256 = f.blob_sha,
            LATERAL regexp_split_to_table(b.content, E'\\n') WITH ORDINALITY AS l(line, n)
          WHERE f.team_id = ${teamId} AND ${underPrefix(prefix)} AND ${test}
          ORDER BY f.path, l.n LIMIT ${limit + 1}`,
      );
    });
    return { matches: rows.slice(0, limit), truncated: rows.length > limit };
  } catch (e) {
    const state = sqlStateOf(e);
    if (state === "2201B") throw new AppError("WORKSPACE_INVALID_PATTERN", `${JSON.stringify(q.query)} is not a valid regular expression (PostgreSQL syntax)`);
    if (state === "57014") throw new AppError("WORKSPACE_INVALID_PATTERN", "The search took too long; use a simpler pattern or a narrower prefix");
    throw e;
  }
}
