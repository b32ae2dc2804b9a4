import { describe, expect, it } from "vitest";
import { DIFF_MAX_EDITS, foldUnchanged, lineDiff, sideBySide, type DiffLine, type DiffRow } from "./diff-model";

/** Rows as short strings: "+3 x" added at new line 3, "-2 y" removed at old line 2, " 1/1 z" unchanged, "…4" a fold of 4 lines. */
const show = (rows: readonly DiffRow[]) =>
  rows.map((r) =>
    r.kind === "gap" ? `…${r.lines.length}` : r.kind === "added" ? `+${r.newLine} ${r.text}` : r.kind === "removed" ? `-${r.oldLine} ${r.text}` : ` ${r.oldLine}/${r.newLine} ${r.text}`,
  );
const numbered = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `line ${i + from}`);

describe("lineDiff", () => {
  it("marks removed and added lines with their old and new line numbers and counts them", () => {
    const d = lineDiff("a\nb\nc\n", "a\nB\nc\nd\n")!;
    expect(show(d.rows)).toEqual([" 1/1 a", "-2 b", "+2 B", " 3/3 c", "+4 d", " 4/5 "]);
    expect([d.added, d.removed]).toEqual([2, 1]);
  });

  it("shows a newline added at the end as an added empty last line", () => {
    const d = lineDiff("a", "a\n")!;
    expect(show(d.rows)).toEqual([" 1/1 a", "+2 "]);
  });

  it("finds no differences between equal texts (all of it folded)", () => {
    const d = lineDiff("same\nsame\n", "same\nsame\n")!;
    expect([d.added, d.removed]).toEqual([0, 0]);
    expect(show(d.rows)).toEqual(["…3"]);
  });

  it("diffs from and to an empty file (a created or deleted one)", () => {
    expect(show(lineDiff("", "x\ny")!.rows)).toEqual(["-1 ", "+1 x", "+2 y"]);
    expect(show(lineDiff("x", "")!.rows)).toEqual(["-1 x", "+1 "]);
  });

  it("folds long unchanged runs, keeping three lines of context on each side of a change", () => {
    const before = [...numbered(20)].join("\n");
    const after = [...numbered(10), "changed", ...numbered(9, 12)].join("\n");
    const rows = lineDiff(before, after)!.rows;
    expect(show(rows)).toEqual(["…7", " 8/8 line 8", " 9/9 line 9", " 10/10 line 10", "-11 line 11", "+11 changed", " 12/12 line 12", " 13/13 line 13", " 14/14 line 14", "…6"]);
    // Opening a fold shows its lines in order.
    const first = rows[0]!;
    expect(first.kind === "gap" && first.lines.map((l) => l.text)).toEqual(numbered(7));
  });

  it("gives up (null) on texts that differ in more lines than it diffs, and not on a big file with few changes", () => {
    const half = DIFF_MAX_EDITS / 2;
    expect(lineDiff(numbered(half + 1).join("\n"), numbered(half + 1, 1_000_000).join("\n"))).toBeNull();
    const big = numbered(50_000);
    const edited = [...big.slice(0, 25_000), "inserted", ...big.slice(25_000)];
    expect(lineDiff(big.join("\n"), edited.join("\n"))).toMatchObject({ added: 1, removed: 0 });
  });
});

describe("foldUnchanged", () => {
  const same = (n: number): DiffLine => ({ kind: "same", text: `s${n}`, oldLine: n, newLine: n });
  it("never folds a single line (the line is shorter than its fold), and folds nothing near changes", () => {
    const lines: DiffLine[] = [same(1), { kind: "added", text: "new", newLine: 2 }, same(2), same(3), same(4), same(5)];
    expect(show(foldUnchanged(lines, 3))).toEqual([" 1/1 s1", "+2 new", " 2/2 s2", " 3/3 s3", " 4/4 s4", " 5/5 s5"]);
    expect(show(foldUnchanged(lines, 1))).toEqual([" 1/1 s1", "+2 new", " 2/2 s2", "…3"]);
  });

  it("folds all of an unchanged text but one-line ones", () => {
    expect(show(foldUnchanged([same(1), same(2)]))).toEqual(["…2"]);
    expect(show(foldUnchanged([same(1)]))).toEqual([" 1/1 s1"]);
  });
});

describe("sideBySide", () => {
  it("pairs each run of removed lines with the added lines after it, and shows unchanged lines on both sides", () => {
    const rows = lineDiff("a\nb\nc\nd", "a\nB\nC\nX\nd")!.rows;
    const pairs = sideBySide(rows).map((r) => (r.kind === "gap" ? "gap" : `${r.left?.text ?? "·"} | ${r.right?.text ?? "·"}`));
    expect(pairs).toEqual(["a | a", "b | B", "c | C", "· | X", "d | d"]);
  });

  it("keeps a removal with no addition on the left alone, and folds stay folds", () => {
    const rows = lineDiff([...numbered(10), "gone"].join("\n"), numbered(10).join("\n"))!.rows;
    const out = sideBySide(rows).map((r) => (r.kind === "gap" ? `gap ${r.lines.length}` : `${r.left?.text ?? "·"} | ${r.right?.text ?? "·"}`));
    expect(out).toEqual(["gap 7", "line 8 | line 8", "line 9 | line 9", "line 10 | line 10", "gone | ·"]);
  });
});
