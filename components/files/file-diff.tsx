"use client";

import { useMemo, useState } from "react";
import type { FileVersion } from "../api-types";
import { lineDiff, sideBySide, type DiffGap, type DiffLine, type DiffRow } from "./diff-model";
import { useFileContent } from "./use-workspace";
import { Button } from "../ui/button";
import { Alert } from "../ui/alert";

// Diffs as tables. Added and removed lines are marked by a visible sign (+ / −) and a word
// for screen readers, not by colour alone.

const SIGN = { added: "+", removed: "−", same: " " } as const;
const SAID = { added: "added", removed: "removed", same: "unchanged" } as const;

function Sign({ kind }: { kind: DiffLine["kind"] }) {
  return (
    <td className={`diff-sign diff-sign-${kind}`}>
      <span aria-hidden="true">{SIGN[kind]}</span>
      <span className="sr-only">{SAID[kind]}</span>
    </td>
  );
}

function GapRow({ gap, columns, onOpen }: { gap: DiffGap; columns: number; onOpen: () => void }) {
  return (
    <tr className="diff-gap">
      <td colSpan={columns}>
        <Button variant="link" onClick={onOpen}>
          Show {gap.lines.length} unchanged lines
        </Button>
      </td>
    </tr>
  );
}

/** Opened gaps are replaced by their lines. */
function openGaps(rows: readonly DiffRow[], opened: ReadonlySet<number>): DiffRow[] {
  return rows.flatMap((r) => (r.kind === "gap" && opened.has(r.key) ? r.lines : [r]));
}

/** The diff from `before` to `after` (unified, or side by side), with a count of changed lines. */
export function DiffTable({ before, after, label }: { before: string; after: string; label: string }) {
  const diff = useMemo(() => lineDiff(before, after), [before, after]);
  const [split, setSplit] = useState(false);
  const [opened, setOpened] = useState<ReadonlySet<number>>(new Set());
  if (!diff) return <p className="muted">These versions are too far apart to compare here; download both instead.</p>;
  const rows = openGaps(diff.rows, opened);
  const open = (key: number) => setOpened(new Set([...opened, key]));
  return (
    <div className="diff">
      <div className="row-tight">
        <span className="muted">
          {diff.added} line{diff.added === 1 ? "" : "s"} added, {diff.removed} removed
        </span>
        <span className="spacer" />
        <div role="group" aria-label="Diff layout" className="row-tight">
          <Button variant="secondary" size="small" aria-pressed={!split} onClick={() => setSplit(false)}>
            Unified
          </Button>
          <Button variant="secondary" size="small" aria-pressed={split} onClick={() => setSplit(true)}>
            Side by side
          </Button>
        </div>
      </div>
      {diff.added + diff.removed === 0 && <p className="muted">No differences.</p>}
      <div className="diff-scroll">
        <table className={`diff-table${split ? " diff-split" : ""}`} aria-label={label}>
          <thead className="sr-only">
            {split ? (
              <tr>
                <th>Old line</th>
                <th>Change</th>
                <th>Old text</th>
                <th>New line</th>
                <th>Change</th>
                <th>New text</th>
              </tr>
            ) : (
              <tr>
                <th>Old line</th>
                <th>New line</th>
                <th>Change</th>
                <th>Text</th>
              </tr>
            )}
          </thead>
          <tbody>
            {split
              ? sideBySide(rows).map((r, i) =>
                  r.kind === "gap" ? (
                    <GapRow key={`g${r.key}`} gap={r} columns={6} onOpen={() => open(r.key)} />
                  ) : (
                    <tr key={i}>
                      <Half line={r.left} side="old" />
                      <Half line={r.right} side="new" />
                    </tr>
                  ),
                )
              : rows.map((r, i) =>
                  r.kind === "gap" ? (
                    <GapRow key={`g${r.key}`} gap={r} columns={4} onOpen={() => open(r.key)} />
                  ) : (
                    <tr key={i} className={`diff-${r.kind}`}>
                      <td className="diff-num">{r.kind === "added" ? "" : r.oldLine}</td>
                      <td className="diff-num">{r.kind === "removed" ? "" : r.newLine}</td>
                      <Sign kind={r.kind} />
                      <td className="diff-text">{r.text}</td>
                    </tr>
                  ),
                )}
          </tbody>
        </table>
      </div>
    </div>
  );
}

function Half({ line, side }: { line: DiffLine | null; side: "old" | "new" }) {
  if (!line) return <td className="diff-empty" colSpan={3} />;
  const kind = line.kind;
  const n = side === "old" ? (line.kind === "added" ? null : line.oldLine) : line.kind === "removed" ? null : line.newLine;
  return (
    <>
      <td className={`diff-num diff-${kind}`}>{n}</td>
      <Sign kind={kind} />
      <td className={`diff-text diff-${kind}`}>{line.text}</td>
    </>
  );
}

/** The changes between two versions of a file (a deletion compares as an empty file). */
export function FileDiff({ teamId, path, from, to }: { teamId: string; path: string; from: FileVersion; to: FileVersion }) {
  const before = useVersionText(teamId, path, from);
  const after = useVersionText(teamId, path, to);
  const label = `Changes from v${from.version} to v${to.version}`;
  return (
    <section aria-label={label} className="file-diff">
      <h3 className="label">
        {label}
        {from.deleted && ` (v${from.version} is a deletion)`}
        {to.deleted && ` (v${to.version} is a deletion)`}
      </h3>
      {before.error || after.error ? (
        <Alert>
          {(before.error ?? after.error)!.message}
        </Alert>
      ) : before.text === null || after.text === null ? (
        <p className="muted">Loading both versions…</p>
      ) : (
        <DiffTable before={before.text} after={after.text} label={label} />
      )}
    </section>
  );
}

/** A version's text; a deletion has none (an empty file), so it is not read. */
function useVersionText(teamId: string, path: string, v: FileVersion) {
  const read = useFileContent(teamId, path, v.version, 0, !v.deleted);
  if (v.deleted) return { text: "", error: null };
  return { text: read.data?.content ?? null, error: read.error };
}
