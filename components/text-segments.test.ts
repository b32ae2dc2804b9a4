import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { textSegments } from "./text-segments";

describe("textSegments", () => {
  it("keeps short text whole", () => {
    expect(textSegments("hello", 4)).toEqual(["hello"]);
    expect(textSegments("", 4)).toEqual([""]);
  });

  it("cuts after a newline where there is one, else after a space, else anywhere", () => {
    expect(textSegments("aaaa\nbbbbbbbbbbbb", 4)).toEqual(["aaaa\n", "bbbbbbbb", "bbbb"]);
    expect(textSegments("aa bbb cccccccccc", 4)).toEqual(["aa bbb ", "cccccccc", "cc"]);
  });

  it("is the text in pieces, and a growing text keeps every piece but its last", () => {
    const alphabet = fc.constantFrom("a", "b", " ", "\n");
    fc.assert(
      fc.property(fc.array(fc.string({ unit: alphabet, maxLength: 30 }), { maxLength: 12 }), fc.integer({ min: 1, max: 8 }), (parts, size) => {
        let text = "";
        let before: string[] = [""];
        for (const p of parts) {
          text += p;
          const now = textSegments(text, size);
          expect(now.join("")).toBe(text);
          expect(now.slice(0, -1).every((s) => s.length >= size && s.length <= 2 * size)).toBe(true);
          expect(now.slice(0, before.length - 1)).toEqual(before.slice(0, -1));
          before = now;
        }
      }),
      { numRuns: 300 },
    );
  });
});
