import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The floors of server/, lowest first (docs/ARCHITECTURE.md, "Floors"): a
// module imports its own floor and the floors below, never one above, type imports included.
// The domain announces changes through db/notify.ts; live/ listens, trpc/ serves, the MCP server
// and http/ face the outside, and main.ts wires it all. Tests and test helpers may cross floors.

const FLOORS = [
  "shared", // ../shared: what the browser loads too (its lint rule keeps it free of server code)
  "base", // the top-level modules: errors, ids, limits, log, task ids…
  "db",
  "models",
  "env.ts",
  "runtime",
  "members",
  "people",
  "workspace",
  "memory",
  "team",
  "routines",
  "mcp",
  "live",
  "trpc",
  "mcp-server",
  "http",
  "wiring", // main.ts and team-layer.ts
] as const;
const WIRING = ["main.ts", "team-layer.ts"];

const SERVER = path.dirname(fileURLToPath(import.meta.url));

/** Every product module of server/ (no tests, no test helpers, no generated code). */
function productModules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return ["generated", "testing"].includes(entry.name) ? [] : productModules(full);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

/**
 * The floor a module is on: its server/ folder, or for a top-level module base, env.ts or
 * wiring; shared/ for ../shared, and "outside" for anything else beyond server/.
 */
function floorOf(file: string): string {
  const parts = path.relative(SERVER, file).split(path.sep);
  if (parts[0] === "..") return parts[1] === "shared" ? "shared" : "outside";
  if (parts.length > 1) return parts[0]!;
  const name = parts[0]!.replace(/\.tsx?$/, ".ts");
  return name === "env.ts" ? name : WIRING.includes(name) ? "wiring" : "base";
}

/** Every relative import (value, type, re-export, dynamic): "from → to" and the floors of both. */
function imports(): { fromFloor: string; toFloor: string; edge: string }[] {
  return productModules(SERVER).flatMap((file) =>
    ts.preProcessFile(readFileSync(file, "utf8"), true, true).importedFiles
      .filter(({ fileName }) => fileName.startsWith("."))
      .map(({ fileName }) => {
        const target = path.resolve(path.dirname(file), fileName);
        const [fromFloor, toFloor] = [floorOf(file), floorOf(target)];
        return { fromFloor, toFloor, edge: `${path.relative(SERVER, file)} → ${path.relative(SERVER, target)}` };
      }),
  );
}

describe("server/'s floors", () => {
  const all = imports();
  const rank = (floor: string) => FLOORS.indexOf(floor as (typeof FLOORS)[number]);

  it("reads the import graph, type imports included", () => {
    expect(all.length).toBeGreaterThan(500);
    // `import type { Membership }` is the only import of members/ in this module.
    expect(all.map((i) => i.edge)).toContain("workspace/authors.ts → members/membership");
  });

  it("puts every folder on a floor", () => {
    const folders = readdirSync(SERVER, { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name !== "testing")
      .map((e) => e.name);
    expect(folders.filter((f) => rank(f) < 0)).toEqual([]);
  });

  it("imports nothing beyond server/ but shared/", () => {
    expect(all.filter((i) => i.toFloor === "outside").map((i) => i.edge)).toEqual([]);
  });

  it("never imports a floor above its own", () => {
    const upward = all.filter((i) => rank(i.toFloor) > rank(i.fromFloor)).map((i) => `${i.edge} (${i.fromFloor} → ${i.toFloor})`);
    expect(upward).toEqual([]);
  });
});
