import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The floors of server/ (docs/ARCHITECTURE.md): the domain (runtime, team, workspace, people)
// announces changes through db/notify.ts and never reaches up into live/ (which listens and fans
// out) or trpc/ (which serves it). The runtime knows nothing of people or workspaces: what it
// needs of them comes in through its configuration. Tests and test helpers may cross floors.

const SERVER = path.dirname(fileURLToPath(import.meta.url));
const DOMAIN = ["runtime", "team", "workspace", "people"];

/** Every product module of server/ (no tests, no test helpers, no generated code). */
function productModules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return ["generated", "testing"].includes(entry.name) ? [] : productModules(full);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

/** The server/ folder a path is in ("runtime", "live"…), or "" for a top-level module. */
const floorOf = (file: string): string => {
  const parts = path.relative(SERVER, file).split(path.sep);
  return parts.length > 1 ? parts[0]! : "";
};

/** "from → to" for each import of one server/ folder by another. */
function crossings(): string[] {
  const out = new Set<string>();
  for (const file of productModules(SERVER)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith(".")) continue;
      const target = path.resolve(path.dirname(file), fileName);
      const [from, to] = [floorOf(file), floorOf(target)];
      if (from !== to) out.add(`${path.relative(SERVER, file)} → ${to || path.basename(target)}`);
    }
  }
  return [...out].sort();
}

describe("server/'s floors", () => {
  const all = crossings();

  it("reads the import graph", () => {
    expect(all.length).toBeGreaterThan(50);
    expect(all).toContain("live/activity.ts → db");
  });

  it("the domain never imports live/ or trpc/", () => {
    const upward = all.filter((c) => DOMAIN.some((d) => c.startsWith(`${d}/`)) && / → (live|trpc)$/.test(c));
    expect(upward).toEqual([]);
  });

  it("the runtime imports nothing of people/ or workspace/", () => {
    expect(all.filter((c) => c.startsWith("runtime/") && / → (people|workspace)$/.test(c))).toEqual([]);
  });
});
