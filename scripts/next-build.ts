import { spawnSync, type StdioOptions } from "node:child_process";

// The one way the project's scripts build the pages: `next build`, with Next's telemetry off
// (nothing phones home, docs/SPEC.md §13). Throws when the build fails.
export function nextBuild(cwd: string, stdio: StdioOptions = "inherit"): void {
  const r = spawnSync("npx", ["next", "build"], { cwd, stdio, env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" } });
  if (r.status !== 0) throw new Error("next build failed");
}
