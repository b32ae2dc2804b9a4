import { describe, expect, it } from "vitest";
import { findUnstorableText, int4, int4String } from "./input-guard";

describe("findUnstorableText", () => {
  it("finds NUL characters and lone surrogates at any depth, values and keys", () => {
    expect(findUnstorableText({ a: ["ok", { b: "x\u0000y" }] })).toBe("input.a[1].b contains a NUL character");
    expect(findUnstorableText({ t: "\uD800" })).toMatch(/^input\.t contains a lone surrogate/);
    expect(findUnstorableText({ t: "a\uDC00" })).toMatch(/lone surrogate/);
    expect(findUnstorableText({ ["k\u0000"]: 1 })).toMatch(/^a key in input/);
  });

  it("accepts ordinary and astral text, numbers and nulls", () => {
    expect(findUnstorableText({ t: "héllo 😀 \uD83D\uDE00", n: 5, z: null, list: [true] })).toBeNull();
  });
});

describe("int4", () => {
  it("bounds integers to the column range", () => {
    expect(int4().safeParse(2_147_483_647).success).toBe(true);
    expect(int4().safeParse(2_147_483_648).success).toBe(false);
    expect(int4().safeParse(-1).success).toBe(false);
    expect(int4String.safeParse("2147483647").success).toBe(true);
    expect(int4String.safeParse("2147483648").success).toBe(false);
    expect(int4String.safeParse("99999999999999999999").success).toBe(false);
  });
});
