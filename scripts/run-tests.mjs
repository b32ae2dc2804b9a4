#!/usr/bin/env node
// `npm test`: vitest, then Playwright. Both always run; exits non-zero if either failed.
// JSON reports: reports/vitest.json, reports/playwright.json (Playwright's path is set in
// playwright.config.ts), and reports/runners.json with each runner's exit code. Old reports are
// removed first, so a missing report means that runner crashed before writing it.
// scripts/count-results.mjs turns them into the closing `N passed, N failed` line.
import { spawn } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
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
    args: ["run", "--reporter=default", "--reporter=json", "--outputFile.json=reports/vitest.json"],
  },
  { name: "playwright", cmd: "playwright", args: ["test"] },
];

mkdirSync(reportsDir, { recursive: true });
for (const file of ["vitest.json", "playwright.json", "runners.json"]) {
  rmSync(join(reportsDir, file), { force: true });
}

const env = {
  ...process.env,
  PATH: [join(root, "node_modules", ".bin"), process.env.PATH ?? ""].join(delimiter),
};

/** @type {import("node:child_process").ChildProcess | undefined} */
let current;
let interrupted = false;
for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"])) {
  process.on(signal, () => {
    interrupted = true;
    current?.kill(signal);
  });
}

/**
 * @param {string} cmd
 * @param {string[]} args
 * @returns {Promise<number>}
 */
function run(cmd, args) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, env, stdio: "inherit" });
    current = child;
    child.on("error", (err) => {
      console.error(`[run-tests] cannot start ${cmd}: ${err.message}`);
      resolve(127);
    });
    child.on("exit", (code, signal) =>
      resolve(code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0)),
    );
  });
}

/** @type {Record<string, { exitCode: number }>} */
const results = {};
for (const { name, cmd, args } of runners) {
  if (interrupted) break;
  console.log(`\n[run-tests] ${name}: ${cmd} ${args.join(" ")}\n`);
  const exitCode = await run(cmd, args);
  results[name] = { exitCode };
  writeFileSync(join(reportsDir, "runners.json"), `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\n[run-tests] ${name} exited with ${exitCode}`);
}

const failed = Object.entries(results).filter(([, r]) => r.exitCode !== 0);
if (interrupted) process.exitCode = 130;
else process.exitCode = failed.length > 0 ? 1 : 0;
if (failed.length > 0) console.log(`[run-tests] failed: ${failed.map(([n]) => n).join(", ")}`);
