"use client";

import { Link } from "../ui/link";
import { useMemo, useState } from "react";
import type { FileEntry } from "../api-types";
import { filesHref } from "./links";
import { authorText, buildTree, folderOpen, formatBytes, type TreeNode } from "./tree-model";
import { Button } from "../ui/button";

/** The workspace as folders (collapsible) and files with size, version and author; a file opens in the viewer. */
export function FileTree({ teamId, entries, selected }: { teamId: string; entries: readonly FileEntry[]; selected: string | null }) {
  const tree = useMemo(() => buildTree(entries), [entries]);
  const [toggled, setToggled] = useState<ReadonlyMap<string, boolean>>(new Map());
  const ctx = { toggled, selected, totalFiles: entries.length };
  const toggle = (path: string, open: boolean) => setToggled(new Map(toggled).set(path, open));
  return (
    <nav aria-label="File tree" className="file-tree">
      {entries.length === 0 ? <p className="muted">No files yet.</p> : <Nodes teamId={teamId} nodes={tree} ctx={ctx} toggle={toggle} />}
    </nav>
  );
}

type Ctx = Parameters<typeof folderOpen>[1];

function Nodes({ teamId, nodes, ctx, toggle }: { teamId: string; nodes: readonly TreeNode[]; ctx: Ctx; toggle: (path: string, open: boolean) => void }) {
  return (
    <ul>
      {nodes.map((n) => {
        if (n.kind === "file") {
          const e = n.entry;
          return (
            <li key={n.path} className="tree-file">
              <Link
                href={filesHref(teamId, { path: n.path })}
                aria-label={n.path}
                aria-current={ctx.selected === n.path ? "page" : undefined}
                title={n.path}
              >
                {n.name}
              </Link>
              <span className="muted tree-meta">
                {formatBytes(e.bytes)} · v{e.version} · {authorText(e.author)}
              </span>
            </li>
          );
        }
        const open = folderOpen(n.path, ctx);
        return (
          <li key={n.path} className="tree-folder">
            <Button className="tree-toggle" aria-expanded={open} aria-label={`Folder ${n.path}`} onClick={() => toggle(n.path, !open)}>
              <span aria-hidden="true">{open ? "▾" : "▸"} </span>
              {n.name}/
            </Button>
            <span className="muted tree-meta">
              {n.files} file{n.files === 1 ? "" : "s"} · {formatBytes(n.bytes)}
            </span>
            {open && <Nodes teamId={teamId} nodes={n.children} ctx={ctx} toggle={toggle} />}
          </li>
        );
      })}
    </ul>
  );
}
