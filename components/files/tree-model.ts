import type { FileAuthor, FileEntry } from "../api-types";

// The workspace listing as a tree of folders and files, and the small facts the Files view
// shows about them. Pure, so the view and its tests agree.

export interface TreeFolder {
  kind: "folder";
  name: string;
  path: string;
  children: TreeNode[];
  /** Live files anywhere under the folder, and their UTF-8 bytes. */
  files: number;
  bytes: number;
}
export interface TreeFile {
  kind: "file";
  name: string;
  path: string;
  entry: FileEntry;
}
export type TreeNode = TreeFolder | TreeFile;

/** Code-unit order, like the server's byte-wise listing (for the ASCII names people use). */
const byName = (a: TreeNode, b: TreeNode) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Folders (by name) before files (by name), at every level; folders carry their totals. */
export function buildTree(entries: readonly FileEntry[]): TreeNode[] {
  const root: TreeFolder = { kind: "folder", name: "", path: "", children: [], files: 0, bytes: 0 };
  const folders = new Map<string, TreeFolder>([["", root]]);
  for (const entry of entries) {
    const segments = entry.path.split("/");
    let parent = root;
    parent.files++;
    parent.bytes += entry.bytes;
    for (let i = 0; i < segments.length - 1; i++) {
      const path = segments.slice(0, i + 1).join("/");
      let folder = folders.get(path);
      if (!folder) {
        folder = { kind: "folder", name: segments[i]!, path, children: [], files: 0, bytes: 0 };
        folders.set(path, folder);
        parent.children.push(folder);
      }
      folder.files++;
      folder.bytes += entry.bytes;
      parent = folder;
    }
    parent.children.push({ kind: "file", name: segments.at(-1)!, path: entry.path, entry });
  }
  for (const folder of folders.values()) {
    folder.children.sort((a, b) => (a.kind === b.kind ? byName(a, b) : a.kind === "folder" ? -1 : 1));
  }
  return root.children;
}

/** The folders a path lies in, outermost first: `a/b/c.md` → `a`, `a/b`. */
export function foldersOf(path: string): string[] {
  const segments = path.split("/");
  return segments.slice(0, -1).map((_, i) => segments.slice(0, i + 1).join("/"));
}

/** Up to this many files, every folder starts open; a larger tree opens only the way to the open file. */
export const OPEN_ALL_UP_TO = 200;

/** Whether a folder shows its children: the person's own toggle, else the default above. */
export function folderOpen(
  folder: string,
  ctx: { toggled: ReadonlyMap<string, boolean>; selected: string | null; totalFiles: number },
): boolean {
  const own = ctx.toggled.get(folder);
  if (own !== undefined) return own;
  if (ctx.totalFiles <= OPEN_ALL_UP_TO) return true;
  return ctx.selected !== null && ctx.selected.startsWith(`${folder}/`);
}

/** Sizes as people read them: bytes below 1 KiB, then KiB and MiB with one decimal. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${trim(bytes / 1024)} KiB`;
  return `${trim(bytes / (1024 * 1024))} MiB`;
}
const trim = (n: number) => (n >= 100 ? Math.round(n).toString() : n.toFixed(1).replace(/\.0$/, ""));

/** Who wrote a version: an agent by member name, a person by name. */
export function authorText(author: FileAuthor): string {
  return author.kind === "member" ? `${author.name} (agent)` : author.name;
}

/** Files the viewer renders as Markdown (the rest show as code with line numbers). */
export function isMarkdown(path: string): boolean {
  return /\.(md|markdown|mdown|mkd)$/i.test(path);
}

/** A file's lines as the server counts them (`totalLines`): split on `\n`, so a trailing newline ends with an empty line. */
export function linesOf(content: string): string[] {
  return content.split("\n");
}
