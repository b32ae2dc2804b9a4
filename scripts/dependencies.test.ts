import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// Every package the code imports is declared in package.json: one installed only as another
// package's dependency may vanish or change version under us with that package's next release.

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SOURCE_DIRS = ["app", "components", "server", "scripts", "bench", "e2e"];
/** Generated code, not ours: Prisma's client imports its own runtime. */
const SKIPPED_DIRS = new Set(["node_modules", "generated", ".next"]);
const SOURCE = /\.(ts|tsx|mts|mjs|js)$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : sourceFiles(full);
    return SOURCE.test(entry.name) && !entry.name.endsWith(".d.ts") ? [full] : [];
  });
}

/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

const isBare = (s: string) => !s.startsWith(".") && !s.startsWith("/") && !s.startsWith("~/") && !s.startsWith("node:");

/** Where a package's types come from when it has none of its own (`mdast` → `@types/mdast`). */
const typesOf = (name: string) => `@types/${name.startsWith("@") ? name.slice(1).replace("/", "__") : name}`;

describe("package.json", () => {
  it("declares every package the code imports", () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as Record<string, Record<string, string> | undefined>;
    const declared = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.devDependencies ?? {})]);
    const builtins = new Set(builtinModules);
    const files = [
      ...SOURCE_DIRS.flatMap((d) => sourceFiles(path.join(ROOT, d))),
      ...readdirSync(ROOT).filter((f) => SOURCE.test(f) && !f.endsWith(".d.ts")).map((f) => path.join(ROOT, f)),
    ];
    expect(files.length).toBeGreaterThan(100);
    const undeclared = new Map<string, string>();
    for (const file of files) {
      const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
      for (const { fileName } of importedFiles) {
        if (!isBare(fileName)) continue;
        const name = packageOf(fileName);
        if (declared.has(name) || declared.has(typesOf(name)) || builtins.has(name) || undeclared.has(name)) continue;
        undeclared.set(name, path.relative(ROOT, file));
      }
    }
    expect(Object.fromEntries(undeclared)).toEqual({});
  });
});
