import { describe, expect, it } from "vitest";
import { AppError } from "../errors";
import { MAX_WRITE_SCOPE_LENGTH, normaliseWriteScope, normaliseWriteScopes, scopesOverlap } from "./write-scopes";

function rejection(raw: string): AppError {
  try {
    normaliseWriteScope(raw);
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error(`${JSON.stringify(raw)} was accepted`);
}

describe("normaliseWriteScope", () => {
  it.each([
    ["src", "src"],
    ["./src/", "src"],
    ["./src", "src"],
    ["src/", "src"],
    ["  src/app  ", "src/app"],
    ["src/app/page.tsx", "src/app/page.tsx"],
    ["src/./app", "src/app"],
    ["././src", "src"],
    [".github/workflows", ".github/workflows"],
    ["a..b/c", "a..b/c"],
    ["Src/App", "Src/App"],
    ["src\\app", "src/app"],
    [".\\src\\", "src"],
    ["docs/my file.md", "docs/my file.md"],
  ])("%j → %j", (raw, expected) => {
    expect(normaliseWriteScope(raw)).toBe(expected);
  });

  it.each([
    ["", "empty"],
    ["   ", "empty"],
    [".", "root"],
    ["./", "root"],
    ["./.", "root"],
    ["..", "traversal"],
    ["../", "traversal"],
    ["../a", "traversal"],
    ["a/../b", "traversal"],
    ["a/..", "traversal"],
    ["a\\..\\b", "traversal"],
    ["/x", "absolute"],
    ["/", "absolute"],
    ["\\x", "absolute"],
    ["\\\\server\\share", "absolute"],
    ["~", "home"],
    ["~/x", "home"],
    ["C:\\x", "drive"],
    ["c:/x", "drive"],
    ["c:x", "drive"],
    ["D:", "drive"],
    ["a//b", "empty segment"],
    ["src//", "empty segment"],
    ["a\\\\b", "empty segment"],
    ["a/\u0000b", "control"],
    ["a\nb", "control"],
  ])("rejects %j (%s)", (raw) => {
    const e = rejection(raw);
    expect(e.code).toBe("TEAM_INVALID_WRITE_SCOPE");
    expect(e.details).toMatchObject({ scope: raw });
    expect(e.message).toContain("Invalid write scope");
  });

  it("rejects scopes longer than the limit", () => {
    expect(normaliseWriteScope("a".repeat(MAX_WRITE_SCOPE_LENGTH))).toHaveLength(MAX_WRITE_SCOPE_LENGTH);
    expect(rejection("a".repeat(MAX_WRITE_SCOPE_LENGTH + 1)).code).toBe("TEAM_INVALID_WRITE_SCOPE");
  });

  it("normalises a list and drops duplicates after normalisation", () => {
    expect(normaliseWriteScopes(["./src/", "src", "docs", "src\\"])).toEqual(["src", "docs"]);
    expect(normaliseWriteScopes([])).toEqual([]);
    expect(() => normaliseWriteScopes(["src", "../etc"])).toThrow(AppError);
  });
});

describe("scopesOverlap", () => {
  it.each([
    ["src", "src", true],
    ["src", "src/app", true],
    ["src/app", "src", true],
    ["src/app", "src/app/page.tsx", true],
    ["src", "srcs", false],
    ["srcs", "src", false],
    ["src/app", "src/apple", false],
    ["src/app", "src/lib", false],
    ["docs", "src", false],
    ["src", "Src", false],
  ])("%j and %j → %s", (a, b, expected) => {
    expect(scopesOverlap(a, b)).toBe(expected);
    expect(scopesOverlap(b, a)).toBe(expected);
  });
});
