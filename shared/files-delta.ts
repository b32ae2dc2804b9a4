// The Files view's live listing and how a receiver applies it (server/live and the browser):
// every live file first, then what changed since (new heads, and the paths deleted). Its id is
// the workspace's change number it has caught up with. The shapes are checked in
// server/workspace/schema.ts.

export type FilesFeedMessage<F extends { path: string }> =
  | { type: "files"; files: F[]; lastChange: number }
  | { type: "changes"; upsert: F[]; removed: string[]; lastChange: number };

export interface FilesListing<F> {
  files: F[];
  lastChange: number;
}

/** The listing after `m`, in path order (code units: the server's byte-wise order for the names people use). */
export function applyFilesMessage<F extends { path: string }>(prev: FilesListing<F> | null, m: FilesFeedMessage<F>): FilesListing<F> {
  if (m.type === "files" || !prev) return { files: m.type === "files" ? m.files : m.upsert, lastChange: m.lastChange };
  const byPath = new Map(prev.files.map((f) => [f.path, f]));
  for (const path of m.removed) byPath.delete(path);
  for (const f of m.upsert) byPath.set(f.path, f);
  const files = [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files, lastChange: m.lastChange };
}
