import { diffArrays } from "diff";
import { linesOf } from "./tree-model";

// A line diff between two texts (two versions of a file, or a person's text and the current
// version) as the rows a unified diff shows: unchanged context around each change, and long
// unchanged runs folded into one row that can be opened. Lines are split like the viewer's
// (`linesOf`), so a diff's line numbers are the viewer's. Pure; the `diff` package does the
// matching.

export type DiffLine =
  | { kind: "same"; text: string; oldLine: number; newLine: number }
  | { kind: "removed"; text: string; oldLine: number }
  | { kind: "added"; text: string; newLine: number };

/** A folded run of unchanged lines (`lines` are what opening it shows). */
export interface DiffGap {
  kind: "gap";
  /** Stable within one diff: the index of its first line. */
  key: number;
  lines: Extract<DiffLine, { kind: "same" }>[];
}

export type DiffRow = DiffLine | DiffGap;

export interface LineDiff {
  rows: DiffRow[];
  added: number;
  removed: number;
}

/** Unchanged lines kept on each side of a change. */
export const DIFF_CONTEXT = 3;
/**
 * Past this many added plus removed lines the matching gives up (its cost grows with the square
 * of the edits): the texts are too far apart to diff in the page.
 */
export const DIFF_MAX_EDITS = 4_000;

/** The diff from `before` to `after`, or null when they differ in more than DIFF_MAX_EDITS lines. */
export function lineDiff(before: string, after: string, context = DIFF_CONTEXT): LineDiff | null {
  const changes = diffArrays(linesOf(before), linesOf(after), { maxEditLength: DIFF_MAX_EDITS });
  if (!changes) return null;
  const lines: DiffLine[] = [];
  let oldLine = 1;
  let newLine = 1;
  let added = 0;
  let removed = 0;
  for (const c of changes) {
    for (const text of c.value) {
      if (c.removed) {
        lines.push({ kind: "removed", text, oldLine: oldLine++ });
        removed++;
      } else if (c.added) {
        lines.push({ kind: "added", text, newLine: newLine++ });
        added++;
      } else lines.push({ kind: "same", text, oldLine: oldLine++, newLine: newLine++ });
    }
  }
  return { rows: foldUnchanged(lines, context), added, removed };
}

/** Keeps `context` unchanged lines next to every change and folds the rest (a fold of one line is shown as the line). */
export function foldUnchanged(lines: readonly DiffLine[], context = DIFF_CONTEXT): DiffRow[] {
  const near = new Array<boolean>(lines.length).fill(false);
  lines.forEach((l, i) => {
    if (l.kind === "same") return;
    for (let j = Math.max(0, i - context); j <= Math.min(lines.length - 1, i + context); j++) near[j] = true;
  });
  const rows: DiffRow[] = [];
  let run: Extract<DiffLine, { kind: "same" }>[] = [];
  let runStart = 0;
  const flush = () => {
    if (run.length === 1) rows.push(run[0]!);
    else if (run.length > 1) rows.push({ kind: "gap", key: runStart, lines: run });
    run = [];
  };
  lines.forEach((l, i) => {
    if (l.kind === "same" && !near[i]) {
      if (run.length === 0) runStart = i;
      run.push(l);
      return;
    }
    flush();
    rows.push(l);
  });
  flush();
  return rows;
}

/** One row of a side-by-side diff: the old line on the left, the new on the right (either may be empty). */
export type SideRow =
  | { kind: "pair"; left: Exclude<DiffLine, { kind: "added" }> | null; right: Exclude<DiffLine, { kind: "removed" }> | null }
  | DiffGap;

/** The unified rows side by side: a run of removed lines is paired with the added lines that follow it. */
export function sideBySide(rows: readonly DiffRow[]): SideRow[] {
  const out: SideRow[] = [];
  let removed: Extract<DiffLine, { kind: "removed" }>[] = [];
  let added: Extract<DiffLine, { kind: "added" }>[] = [];
  const flush = () => {
    for (let i = 0; i < Math.max(removed.length, added.length); i++) out.push({ kind: "pair", left: removed[i] ?? null, right: added[i] ?? null });
    removed = [];
    added = [];
  };
  for (const row of rows) {
    if (row.kind === "removed") {
      if (added.length > 0) flush();
      removed.push(row);
    } else if (row.kind === "added") added.push(row);
    else {
      flush();
      out.push(row.kind === "same" ? { kind: "pair", left: row, right: row } : row);
    }
  }
  flush();
  return out;
}
