import { describe, expect, it } from "vitest";
import { SUMMARY_CHARS, summaryLine } from "./summary-line";

describe("summaryLine", () => {
  it("says an object's fields on one line: strings quoted and cut, arrays counted, objects elided", () => {
    expect(summaryLine({ subject: "Write the plan", blocked_by: ["task-1", "task-2"], ready: true, meta: { a: 1 }, n: 3, none: null })).toBe(
      'subject: "Write the plan", blocked_by: [2], ready: true, meta: {…}, n: 3, none: null',
    );
    expect(summaryLine({ text: `line one\n\nline   two ${"x".repeat(60)}` })).toBe(`text: "line one line two ${"x".repeat(21)}…"`);
  });

  it("keeps the whole line within its limit, and says plain values as they are", () => {
    const long = summaryLine(Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`field${i}`, i])));
    expect(long).toHaveLength(SUMMARY_CHARS);
    expect(long.endsWith("…")).toBe(true);
    expect(summaryLine("Team: Todo app.\nYou are lead.")).toBe("Team: Todo app. You are lead.");
    expect(summaryLine([1, 2])).toBe("[2]");
    expect(summaryLine(42)).toBe("42");
    expect(summaryLine({})).toBe("");
    expect(summaryLine(undefined)).toBe("");
  });
});
