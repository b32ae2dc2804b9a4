import { z } from "zod";
import { inTx, type Db, type DbOrTx } from "../db/client";
import { sqlStateOf } from "../db/errors";
import { Prisma } from "../db/generated/client";
import { AppError } from "../errors";
import type { SessionId } from "../ids";
import { utf8Bytes } from "../../shared/input-guard";
import { LIMITS } from "../../shared/limits";
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
import { underPrefix } from "./prefix";
import { contentOf, CounterRows, notFound } from "./store";

// Reading a workspace: listings (path order, byte-wise), a file or one of its versions, its
// history, the team's changes in order, and search. Rows read back are parsed with zod.

const EntryRow = z.object({ path: z.string(), version: z.number().int(), bytes: z.number().int(), author: AuthorSchema, created_at: z.date() });
const EntryRows = z.array(EntryRow);

export async function listFiles(
  db: DbOrTx,
  teamId: SessionId,
  q: { prefix?: string; cursor?: string; limit?: number } = {},
): Promise<FilePage> {
  const prefix = normalisePrefix(q.prefix);
  const limit = q.limit ?? LIMITS.workspaceListDefault;
  const after = q.cursor === undefined ? Prisma.sql`TRUE` : Prisma.sql`f.path > ${q.cursor}`;
  const rows = EntryRows.parse(
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
const VersionRows = z.array(VersionRow);
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

/**
 * A file's versions, newest first (tombstones included), a page at a time: `beforeVersion`
 * pages back. Unknown path: WORKSPACE_NOT_FOUND.
 */
export async function fileHistory(
  db: DbOrTx,
  teamId: SessionId,
  rawPath: string,
  q: { beforeVersion?: number; limit?: number } = {},
): Promise<VersionView[]> {
  const path = normaliseFilePath(rawPath);
  const before = q.beforeVersion === undefined ? Prisma.sql`TRUE` : Prisma.sql`version < ${q.beforeVersion}`;
  const rows = VersionRows.parse(
    await db.$queryRaw`SELECT ${VERSION_COLUMNS} FROM workspace_versions WHERE team_id = ${teamId} AND path = ${path} AND ${before}
      ORDER BY version DESC LIMIT ${q.limit ?? LIMITS.workspaceListMax}`,
  );
  if (rows.length === 0 && q.beforeVersion === undefined) throw notFound(path, null);
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
  const rows = VersionRows.parse(
    await db.$queryRaw`SELECT ${VERSION_COLUMNS} FROM workspace_versions WHERE team_id = ${teamId} AND ${after} AND ${before}
      ORDER BY change ${backwards ? Prisma.sql`DESC` : Prisma.sql`ASC`} LIMIT ${limit}`,
  );
  const views = rows.map(toVersion);
  return backwards ? views.reverse() : views;
}

/** Every live file (all pages) and the change number they are as of, from one snapshot. */
export async function filesAsOfNow(db: Db, teamId: SessionId): Promise<{ files: FileEntry[]; lastChange: number }> {
  return db.$transaction(
    async (tx) => {
      const files: FileEntry[] = [];
      let cursor: string | undefined;
      do {
        const page = await listFiles(tx, teamId, { cursor, limit: LIMITS.workspaceListMax });
        files.push(...page.files);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return { files, lastChange: (await workspaceSummary(tx, teamId)).lastChange };
    },
    { isolationLevel: "RepeatableRead" },
  );
}

/**
 * What changed after change `after`, as the listing sees it: each changed path's newest head,
 * or its deletion; `more` when a page's worth came (read again from `lastChange`).
 */
export async function filesChangedAfter(
  db: DbOrTx,
  teamId: SessionId,
  after: number,
  limit: number = LIMITS.workspaceListMax,
): Promise<{ upsert: FileEntry[]; removed: string[]; lastChange: number; more: boolean }> {
  const changes = await listWorkspaceChanges(db, teamId, { afterChange: after, limit });
  const newest = new Map(changes.map((c) => [c.path, c]));
  const upsert: FileEntry[] = [];
  const removed: string[] = [];
  for (const c of newest.values()) {
    if (c.deleted) removed.push(c.path);
    else upsert.push({ path: c.path, version: c.version, bytes: c.bytes, author: c.author, changedAt: c.createdAt });
  }
  return { upsert, removed, lastChange: changes.at(-1)?.change ?? after, more: changes.length === limit };
}

/**
 * A file's content with its version: the head, or `version` (a deleted version is
 * WORKSPACE_NOT_FOUND). Lines are 1-based and inclusive. With `maxBytes` (the tools' read
 * limit) the read stops at whole lines within that many bytes, whatever range was asked for,
 * and `truncated` says there is more; a first line longer than that is cut.
 */
export async function readFile(
  db: DbOrTx,
  teamId: SessionId,
  q: { path: string; version?: number; startLine?: number; endLine?: number; maxBytes?: number },
): Promise<FileContent> {
  const path = normaliseFilePath(q.path);
  const rows = VersionRows.parse(
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
  const wanted = Math.min(q.endLine ?? totalLines, totalLines);
  let endLine = wanted;
  let cut = false;
  let content: string;
  if (startLine === 1 && endLine === totalLines && q.maxBytes === undefined) content = full;
  else {
    const taken = lines.slice(startLine - 1, Math.max(endLine, startLine - 1));
    if (q.maxBytes !== undefined) {
      let used = 0;
      let n = 0;
      for (const line of taken) {
        const cost = utf8Bytes(line) + (n > 0 ? 1 : 0); // the newline before it
        if (used + cost > q.maxBytes) break;
        used += cost;
        n++;
      }
      if (n === 0 && taken.length > 0) {
        taken[0] = Buffer.from(taken[0]!, "utf8").subarray(0, q.maxBytes).toString("utf8");
        n = 1;
        cut = true;
      }
      taken.length = n;
      endLine = startLine - 1 + n;
    }
    content = taken.join("\n");
  }
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
    truncated: endLine < wanted || cut,
  });
}

export async function workspaceSummary(db: DbOrTx, teamId: SessionId): Promise<WorkspaceSummary> {
  const row = CounterRows.parse(await db.$queryRaw`SELECT file_count, total_bytes, last_change FROM workspaces WHERE team_id = ${teamId}`)[0];
  return { files: row?.file_count ?? 0, bytes: row?.total_bytes ?? 0, lastChange: row?.last_change ?? 0 };
}

const MatchRow = z.object({ path: z.string(), line: z.coerce.number().int(), text: z.string() });
const MatchRows = z.array(MatchRow);

/** Searches at once per process: each may scan a whole workspace, and the pool is shared. */
const SEARCH_SLOTS = 2;
let searching = 0;
const waiting: (() => void)[] = [];

async function inSearchSlot<T>(fn: () => Promise<T>): Promise<T> {
  if (searching >= SEARCH_SLOTS) await new Promise<void>((resolve) => waiting.push(resolve));
  else searching++;
  try {
    return await fn();
  } finally {
    const next = waiting.shift();
    if (next) next(); // the slot passes on
    else searching--;
  }
}

/**
 * Lines matching `query` (literal text, or a PostgreSQL regular expression with `regex`) in
 * live files at or under `prefix`, in path and line order. Postgres does the matching, in its
 * own transaction under a statement timeout, at most SEARCH_SLOTS at once: a hostile pattern or
 * a full workspace costs bounded time and never starves other work. Files that cannot match
 * are skipped before their lines are split (`regexp_like` with `n`: newline-sensitive, a
 * superset of the per-line test).
 */
export async function searchFiles(
  db: Db,
  teamId: SessionId,
  q: { query: string; regex?: boolean; ignoreCase?: boolean; prefix?: string; limit?: number },
): Promise<SearchResult> {
  const prefix = normalisePrefix(q.prefix);
  const limit = q.limit ?? LIMITS.workspaceSearchDefault;
  const flags = q.ignoreCase ? "ni" : "n";
  const [file, line] = q.regex
    ? [Prisma.sql`regexp_like(b.content, ${q.query}, ${flags})`, Prisma.sql`regexp_like(l.line, ${q.query}, ${flags})`]
    : q.ignoreCase
      ? [Prisma.sql`strpos(lower(b.content), lower(${q.query})) > 0`, Prisma.sql`strpos(lower(l.line), lower(${q.query})) > 0`]
      : [Prisma.sql`strpos(b.content, ${q.query}) > 0`, Prisma.sql`strpos(l.line, ${q.query}) > 0`];
  try {
    const rows = await inSearchSlot(() =>
      inTx(db, async (tx) => {
        await tx.$executeRaw`SET LOCAL statement_timeout = '5s'`;
        // Compiled once up front, so a bad pattern is refused even where no file is read.
        if (q.regex) await tx.$queryRaw`SELECT regexp_like('', ${q.query}, ${flags})`;
        return MatchRows.parse(
          await tx.$queryRaw`SELECT f.path, l.n AS line, left(l.line, ${LIMITS.workspaceMatchChars}) AS text
            FROM workspace_files f JOIN workspace_blobs b ON b.sha256 = f.blob_sha,
              LATERAL regexp_split_to_table(b.content, E'\\n') WITH ORDINALITY AS l(line, n)
            WHERE f.team_id = ${teamId} AND ${underPrefix(prefix)} AND ${file} AND ${line}
            ORDER BY f.path, l.n LIMIT ${limit + 1}`,
        );
      }),
    );
    return { matches: rows.slice(0, limit), truncated: rows.length > limit };
  } catch (e) {
    const state = sqlStateOf(e);
    if (state === "2201B") throw new AppError("WORKSPACE_INVALID_PATTERN", `${JSON.stringify(q.query)} is not a valid regular expression (PostgreSQL syntax)`);
    if (state === "57014") throw new AppError("WORKSPACE_INVALID_PATTERN", "The search took too long; use a simpler pattern or a narrower prefix");
    throw e;
  }
}
