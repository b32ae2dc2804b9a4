import { describe, expect, it } from "vitest";
import type { FileEntry } from "../api-types";
import { authorText, buildTree, folderOpen, foldersOf, formatBytes, isMarkdown, linesOf, OPEN_ALL_UP_TO, type TreeNode } from "./tree-model";

const at = new Date(0);
const file = (path: string, bytes = 10, version = 1): FileEntry => ({ path, bytes, version, author: { kind: "member", name: "lead", sessionId: "ses_1" }, changedAt: at });

/** The tree as indented lines: folders with their totals, files with their sizes. */
function outline(nodes: readonly TreeNode[], depth = 0): string[] {
  return nodes.flatMap((n) =>
    n.kind === "folder"
      ? [`${"  ".repeat(depth)}${n.name}/ (${n.files} files, ${n.bytes} B)`, ...outline(n.children, depth + 1)]
      : [`${"  ".repeat(depth)}${n.name} ${n.entry.bytes} B`],
  );
}

describe("buildTree", () => {
  it("nests files in folders, folders first and by name at every level, with each folder's totals", () => {
    // In the server's path order: a folder's files can come before and after its subfolders.
    const entries = [file("README.md", 5), file("notes/b.md", 1), file("notes/deep/x.txt", 2), file("notes/z.md", 3), file("src/app.ts", 40), file("zeta.txt", 7)];
    expect(outline(buildTree(entries))).toEqual([
      "notes/ (3 files, 6 B)",
      "  deep/ (1 files, 2 B)",
      "    x.txt 2 B",
      "  b.md 1 B",
      "  z.md 3 B",
      "src/ (1 files, 40 B)",
      "  app.ts 40 B",
      "README.md 5 B",
      "zeta.txt 7 B",
    ]);
  });

  it("keeps each file's full path and listing entry, and makes one node per folder", () => {
    const entries = [file("a/b/c.md", 1, 3), file("a/b/d.md", 1, 1)];
    const [a] = buildTree(entries);
    expect(a).toMatchObject({ kind: "folder", path: "a", files: 2 });
    const b = a!.kind === "folder" ? a!.children : [];
    expect(b).toHaveLength(1);
    expect(b[0]).toMatchObject({ kind: "folder", path: "a/b" });
    const leaves = b[0]!.kind === "folder" ? b[0]!.children : [];
    expect(leaves.map((n) => (n.kind === "file" ? [n.path, n.entry.version] : null))).toEqual([
      ["a/b/c.md", 3],
      ["a/b/d.md", 1],
    ]);
  });

  it("is empty for an empty workspace", () => {
    expect(buildTree([])).toEqual([]);
  });
});

describe("folderOpen", () => {
  const none = new Map<string, boolean>();
  it("opens every folder of a small tree, and only the way to the open file in a large one", () => {
    expect(folderOpen("src", { toggled: none, selected: null, totalFiles: OPEN_ALL_UP_TO })).toBe(true);
    const large = { toggled: none, selected: "src/app/main.ts", totalFiles: OPEN_ALL_UP_TO + 1 };
    expect(folderOpen("src", large)).toBe(true);
    expect(folderOpen("src/app", large)).toBe(true);
    expect(folderOpen("docs", large)).toBe(false);
    // A folder whose name starts like the open file's folder is another folder.
    expect(folderOpen("sr", large)).toBe(false);
  });

  it("follows the person's own toggle over either default", () => {
    expect(folderOpen("src", { toggled: new Map([["src", false]]), selected: "src/a.ts", totalFiles: 1 })).toBe(false);
    expect(folderOpen("docs", { toggled: new Map([["docs", true]]), selected: null, totalFiles: 10_000 })).toBe(true);
  });
});

describe("small facts", () => {
  it("lists the folders a path lies in, outermost first", () => {
    expect(foldersOf("a/b/c.md")).toEqual(["a", "a/b"]);
    expect(foldersOf("top.md")).toEqual([]);
  });

  it("formats sizes in B, KiB and MiB", () => {
    expect([0, 1023, 1024, 1536, 200 * 1024, 1024 * 1024, 64 * 1024 * 1024 - 1].map(formatBytes)).toEqual([
      "0 B",
      "1023 B",
      "1 KiB",
      "1.5 KiB",
      "200 KiB",
      "1 MiB",
      "64 MiB",
    ]);
  });

  it("names agents as agents and people by name", () => {
    expect(authorText({ kind: "member", name: "researcher", sessionId: "ses_2" })).toBe("researcher (agent)");
    expect(authorText({ kind: "person", id: "u1", name: "Olive Owner" })).toBe("Olive Owner");
  });

  it("renders Markdown files by extension, any case", () => {
    expect(["a.md", "B.MD", "c.markdown"].map(isMarkdown)).toEqual([true, true, true]);
    expect(["a.ts", "md", "notes.md.txt"].map(isMarkdown)).toEqual([false, false, false]);
  });

  it("counts lines like the server: a trailing newline ends with an empty line", () => {
    expect(linesOf("a\nb\n")).toEqual(["a", "b", ""]);
    expect(linesOf("")).toEqual([""]);
  });
});
