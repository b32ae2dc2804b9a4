#!/usr/bin/env node
// `npm test`: vitest and Playwright side by side (both always run to the end); exits non-zero if
// either failed. Side by side because most of either suite's time is waiting (on Postgres, child
// processes, the keyless model's pace, the browser), so together they fit CI's time where one
// after the other does not; vitest takes one test file at a time here, leaving the other core to
// the browser, the app server and the database. vitest's output goes to reports/vitest.log and
// is printed whole when it ends, so the two logs do not interleave.
// JSON reports: reports/vitest.json, reports/playwright.json (Playwright's path is set in
// playwright.config.ts), and reports/runners.json with each runner's exit code. Old reports are
// removed first, so a missing report means that runner crashed before writing it.
// scripts/count-results.mjs turns them into the closing `N passed, N failed` line.
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { constants } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const reportsDir = join(root, "reports");

/** @type {Array<{ name: "vitest" | "playwright"; cmd: string; args: string[] }>} */
const runners = [
  {
    name: "vitest",
    cmd: "vitest",
    args: ["run", "--maxWorkers=1", "--reporter=default", "--reporter=json", "--outputFile.json=reports/vitest.json"],
  },
  { name: "playwright", cmd: "playwright", args: ["test"] },
];

mkdirSync(reportsDir, { recursive: true });
for (const file of ["vitest.json", "vitest.log", "playwright.json", "runners.json"]) {
  rmSync(join(reportsDir, file), { force: true });
}

const env = {
  ...process.env,
  PATH: [join(root, "node_modules", ".bin"), process.env.PATH ?? ""].join(delimiter),
};

/** @type {Set<import("node:child_process").ChildProcess>} */
const children = new Set();
let interrupted = false;
for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"])) {
  process.on(signal, () => {
    interrupted = true;
    for (const child of children) child.kill(signal);
  });
}

/**
 * @param {string} cmd
 * @param {string[]} args
 * @param {string | null} logFile where its output goes (null: this process's stdout and stderr)
 * @returns {Promise<number>}
 */
function run(cmd, args, logFile) {
  return new Promise((resolve) => {
    const out = logFile === null ? "inherit" : openSync(logFile, "w");
    const child = spawn(cmd, args, { cwd: root, env, stdio: ["ignore", out, out] });
    children.add(child);
    child.on("error", (err) => {
      console.error(`[run-tests] cannot start ${cmd}: ${err.message}`);
      resolve(127);
    });
    child.on("exit", (code, signal) => {
      children.delete(child);
      if (typeof out === "number") closeSync(out);
      resolve(code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0));
    });
  });
}

/** @type {Record<string, { exitCode: number }>} */
const results = {};
await Promise.all(
  runners.map(async ({ name, cmd, args }) => {
    const logFile = name === "vitest" ? join(reportsDir, "vitest.log") : null;
    console.log(`\n[run-tests] ${name}: ${cmd} ${args.join(" ")}${logFile ? ` (output: ${logFile})` : ""}\n`);
    const exitCode = await run(cmd, args, logFile);
    if (logFile) process.stdout.write(readFileSync(logFile));
    results[name] = { exitCode };
    writeFileSync(join(reportsDir, "runners.json"), `${JSON.stringify(results, null, 2)}\n`);
    console.log(`\n[run-tests] ${name} exited with ${exitCode}`);
  }),
);

const failed = Object.entries(results).filter(([, r]) => r.exitCode !== 0);
if (interrupted) process.exitCode = 130;
else process.exitCode = failed.length > 0 ? 1 : 0;
if (failed.length > 0) console.log(`[run-tests] failed: ${failed.map(([n]) => n).join(", ")}`);
