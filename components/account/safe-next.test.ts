import { describe, expect, it } from "vitest";
import { safeNext, signInHref } from "./safe-next";

describe("safeNext", () => {
  it("keeps paths on this site with their query and hash", () => {
    expect(safeNext("/teams/ses_1?member=researcher#x")).toBe("/teams/ses_1?member=researcher#x");
    expect(safeNext("/account")).toBe("/account");
    expect(safeNext("/invite/inv_abc")).toBe("/invite/inv_abc");
  });

  it("sends anything that could leave the site home", () => {
    for (const raw of [
      null,
      undefined,
      "",
      "https://evil.example/",
      "//evil.example/path",
      "/\\evil.example",
      "\\\\evil.example",
      "javascript:alert(1)",
      "/\t/evil.example",
      "/\n/evil.example",
      "teams/ses_1",
      "http:/evil.example",
    ]) {
      expect(safeNext(raw), String(raw)).toBe("/");
    }
  });

  it("normalises dot segments without leaving the site", () => {
    expect(safeNext("/a/../../b")).toBe("/b");
  });
});

describe("signInHref", () => {
  it("carries the wanted path, encoded", () => {
    expect(signInHref("/teams/ses_1?member=a b")).toBe(`/sign-in?next=${encodeURIComponent("/teams/ses_1?member=a%20b")}`);
    expect(signInHref("/")).toBe("/sign-in");
    expect(signInHref("//evil.example")).toBe("/sign-in");
  });
});
