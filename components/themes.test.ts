import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The dark theme is the light one with other colour tokens: under `prefers-color-scheme` a
// stylesheet may only set custom properties on :root. The accessibility e2e test relies on it: in
// the second theme it runs only axe's colour rules, as nothing else can differ.

const ROOT = fileURLToPath(new URL("..", import.meta.url));

function stylesheets(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".css"))
    .map((e) => path.join(e.parentPath, e.name));
}

/** The bodies of the `@media (prefers-color-scheme…)` blocks in a stylesheet. */
function colourSchemeBlocks(css: string): string[] {
  const blocks: string[] = [];
  for (const m of css.matchAll(/@media[^{]*prefers-color-scheme[^{]*\{/g)) {
    let depth = 1;
    let i = m.index + m[0].length;
    const start = i;
    for (; i < css.length && depth > 0; i++) depth += css[i] === "{" ? 1 : css[i] === "}" ? -1 : 0;
    blocks.push(css.slice(start, i - 1));
  }
  return blocks;
}

const TOKENS_ONLY = /^\s*:root\s*\{(\s*--[\w-]+\s*:[^;{}]+;)*\s*\}\s*$/;

describe("themes", () => {
  it("differ in colour tokens on :root alone", () => {
    const files = [...stylesheets("app"), ...stylesheets("components")];
    const blocks = files.flatMap((f) => colourSchemeBlocks(readFileSync(f, "utf8")).map((body) => ({ file: path.relative(ROOT, f), body })));
    expect(blocks.length).toBeGreaterThan(0);
    for (const { file, body } of blocks) expect(body, file).toMatch(TOKENS_ONLY);
  });

  it("the check refuses a themed rule that is not a token", () => {
    const [body] = colourSchemeBlocks("@media (prefers-color-scheme: dark) { :root { --bg: #000; } .x { display: none; } }");
    expect(body).not.toMatch(TOKENS_ONLY);
    const [ok] = colourSchemeBlocks("@media (prefers-color-scheme: dark) { :root { --bg: #000; --fg: rgb(0 0 0 / 0.6); } }");
    expect(ok).toMatch(TOKENS_ONLY);
  });
});
