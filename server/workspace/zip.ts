import { Readable } from "node:stream";
import yazl from "yazl";
import { z } from "zod";
import type { DbOrTx } from "../db/client";
import type { SessionId } from "../ids";

// The whole workspace as one zip, streamed (SPEC.md §14): entries are added in path order and
// their content is fetched only when the archive reaches them, a window of files at a time, so
// a 64 MiB workspace never sits in memory at once. The listing is taken first: the archive is
// the workspace's heads at that moment (content is immutable per version, so later changes
// cannot tear it).

const HeadRow = z.object({ path: z.string(), version: z.number().int(), bytes: z.number().int(), blob_sha: z.string(), created_at: z.date() });
const HeadRows = z.array(HeadRow);
const BlobRow = z.object({ sha256: z.string(), content: z.string() });
const BlobRows = z.array(BlobRow);

/** Files fetched per round trip, and the bytes a window may hold. */
const WINDOW_FILES = 64;
const WINDOW_BYTES = 4 * 1024 * 1024;

export async function workspaceZip(db: DbOrTx, teamId: SessionId): Promise<{ stream: Readable; files: number }> {
  const heads = HeadRows.parse(
    await db.$queryRaw`SELECT f.path, f.version, f.bytes, f.blob_sha, v.created_at
      FROM workspace_files f JOIN workspace_versions v ON v.team_id = f.team_id AND v.path = f.path AND v.version = f.version
      WHERE f.team_id = ${teamId} AND f.blob_sha IS NOT NULL ORDER BY f.path`,
  );
  // Windows of consecutive files, each fetched in one query when the archive reaches it.
  const windows: (typeof heads)[] = [];
  for (const h of heads) {
    const last = windows.at(-1);
    const bytes = last?.reduce((n, f) => n + f.bytes, 0) ?? 0;
    if (last && last.length < WINDOW_FILES && bytes + h.bytes <= WINDOW_BYTES) last.push(h);
    else windows.push([h]);
  }
  const loaded = new Map<number, Promise<Map<string, string>>>();
  const load = (w: number): Promise<Map<string, string>> => {
    let p = loaded.get(w);
    if (!p) {
      loaded.delete(w - 1); // entries are read in order: the previous window is done
      const shas = [...new Set(windows[w]!.map((h) => h.blob_sha))];
      p = db.$queryRaw`SELECT sha256, content FROM workspace_blobs WHERE sha256 = ANY(${shas}::text[])`.then(
        (rows) => new Map(BlobRows.parse(rows).map((r) => [r.sha256, r.content])),
      );
      loaded.set(w, p);
    }
    return p;
  };

  const zip = new yazl.ZipFile();
  const out = zip.outputStream as Readable;
  zip.on("error", (e: Error) => out.destroy(e));
  windows.forEach((files, w) => {
    for (const h of files) {
      zip.addReadStreamLazy(h.path, { mtime: h.created_at, size: h.bytes }, (cb) => {
        load(w).then(
          (blobs) => cb(null, Readable.from([Buffer.from(blobs.get(h.blob_sha)!, "utf8")], { objectMode: false })),
          (e: unknown) => cb(e instanceof Error ? e : new Error(String(e)), Readable.from([])),
        );
      });
    }
  });
  zip.end();
  return { stream: out, files: heads.length };
}
