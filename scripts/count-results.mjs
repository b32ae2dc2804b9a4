#!/usr/bin/env node
// Counts test results from the runners' JSON reports and prints ONE closing line
// `N passed, N failed, N skipped` (the line CI reads). Plain JS on purpose: it must run with
// bare `node`, even when `npm ci` failed.
//
//   node scripts/count-results.mjs [--reports DIR] [--failed N] [--test-exit-code N]
//
//   --reports DIR        where vitest.json, playwright.json and runners.json are (default: reports)
//   --failed N           extra failures to add (e.g. typecheck and lint steps that failed)
//   --test-exit-code N   exit code of `npm test`; non-zero with nothing counted as failed adds 1
//
// Exit code: 1 when anything failed, else 0.
//
// Report shapes (checked against the installed packages, not guessed):
// - vitest 4 `json` reporter (JsonTestResults): numPassedTests, numFailedTests, numPendingTests
//   (skipped), numTodoTests, success, testResults[] with per-file `status` and
//   assertionResults[].status. A file that fails outside any test (import error, failing
//   beforeAll) has status "failed" and may have no failed assertion: it counts as 1 failed.
// - Playwright `json` reporter (JSONReport): stats.expected (passed), stats.unexpected (failed),
//   stats.flaky (failed first, passed on retry: counted as passed), stats.skipped, and errors[]
//   (global errors: a spec file that does not load, webServer that does not start, ...): each
//   counts as 1 failed.
// - runners.json (written by scripts/run-tests.mjs): { "<runner>": { "exitCode": n } }. A runner
//   that exited non-zero while its report shows no failure (unhandled error, "No tests found",
//   crash after writing) counts as 1 failed.
// A runner whose report is missing or unreadable counts as 1 failed.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** @typedef {{ passed: number; failed: number; skipped: number }} Counts */

export const RUNNERS = /** @type {const} */ (["vitest", "playwright"]);

/** @param {unknown} v */
const num = (v) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.trunc(v) : 0);

/** @param {unknown} v @returns {Record<string, unknown>} */
const obj = (v) => (v !== null && typeof v === "object" && !Array.isArray(v) ? /** @type {Record<string, unknown>} */ (v) : {});

/**
 * @param {unknown} report vitest JsonTestResults
 * @returns {Counts}
 */
export function countVitest(report) {
  const r = obj(report);
  const passed = num(r.numPassedTests);
  let failed = num(r.numFailedTests);
  const skipped = num(r.numPendingTests) + num(r.numTodoTests);
  const files = Array.isArray(r.testResults) ? r.testResults : [];
  for (const file of files) {
    const f = obj(file);
    if (f.status !== "failed") continue;
    const assertions = Array.isArray(f.assertionResults) ? f.assertionResults : [];
    if (!assertions.some((a) => obj(a).status === "failed")) failed += 1;
  }
  // success=false with nothing counted as failed (e.g. no test files): still a failure.
  if (failed === 0 && r.success === false) failed = 1;
  return { passed, failed, skipped };
}

/**
 * @param {unknown} report Playwright JSONReport
 * @returns {Counts}
 */
export function countPlaywright(report) {
  const r = obj(report);
  const stats = obj(r.stats);
  const errors = Array.isArray(r.errors) ? r.errors.length : 0;
  return {
    passed: num(stats.expected) + num(stats.flaky),
    failed: num(stats.unexpected) + errors,
    skipped: num(stats.skipped),
  };
}

/**
 * Counts for one runner. `report` undefined = missing/unreadable (1 failed).
 * @param {"vitest" | "playwright"} runner
 * @param {unknown} report
 * @param {number | undefined} [exitCode]
 * @returns {Counts}
 */
export function countRunner(runner, report, exitCode) {
  if (report === undefined) return { passed: 0, failed: 1, skipped: 0 };
  const counts = runner === "vitest" ? countVitest(report) : countPlaywright(report);
  if (exitCode !== undefined && exitCode !== 0 && counts.failed === 0) counts.failed = 1;
  return counts;
}

/**
 * @param {{
 *   reports: Partial<Record<"vitest" | "playwright", unknown>>;
 *   exitCodes?: Partial<Record<"vitest" | "playwright", number>>;
 *   extraFailed?: number;
 *   testExitCode?: number;
 * }} input
 * @returns {{ total: Counts; byRunner: Record<"vitest" | "playwright", Counts> }}
 */
export function summarize({ reports, exitCodes = {}, extraFailed = 0, testExitCode }) {
  const byRunner = /** @type {Record<"vitest" | "playwright", Counts>} */ ({});
  const total = { passed: 0, failed: 0, skipped: 0 };
  for (const runner of RUNNERS) {
    const c = countRunner(runner, reports[runner], exitCodes[runner]);
    byRunner[runner] = c;
    total.passed += c.passed;
    total.failed += c.failed;
    total.skipped += c.skipped;
  }
  if (testExitCode !== undefined && testExitCode !== 0 && total.failed === 0) total.failed = 1;
  total.failed += num(extraFailed);
  return { total, byRunner };
}

/** @param {Counts} c */
export function formatLine(c) {
  return `${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`;
}

/**
 * Reads a JSON file; undefined when it is missing or not valid JSON.
 * @param {string} path
 * @returns {unknown}
 */
export function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
}

/**
 * Reads the reports in `dir` (vitest.json, playwright.json, runners.json).
 * @param {string} dir
 */
export function readReports(dir) {
  /** @type {Partial<Record<"vitest" | "playwright", unknown>>} */
  const reports = {};
  /** @type {Partial<Record<"vitest" | "playwright", number>>} */
  const exitCodes = {};
  const runners = obj(readJson(join(dir, "runners.json")));
  for (const runner of RUNNERS) {
    const report = readJson(join(dir, `${runner}.json`));
    if (report !== undefined) reports[runner] = report;
    const code = obj(runners[runner]).exitCode;
    if (typeof code === "number") exitCodes[runner] = code;
  }
  return { reports, exitCodes };
}

/** @param {string[]} argv */
function parseArgs(argv) {
  const opts = { reports: "reports", failed: 0, testExitCode: /** @type {number | undefined} */ (undefined) };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const eq = arg.indexOf("=");
    const flag = eq >= 0 ? arg.slice(0, eq) : arg;
    const inline = eq >= 0 ? arg.slice(eq + 1) : undefined;
    const value = () => inline ?? argv[++i] ?? "";
    if (flag === "--reports") opts.reports = value();
    else if (flag === "--failed") opts.failed = Number.parseInt(value(), 10) || 0;
    else if (flag === "--test-exit-code") opts.testExitCode = Number.parseInt(value(), 10);
    else throw new Error(`unknown argument: ${arg}`);
  }
  return opts;
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const { reports, exitCodes } = readReports(opts.reports);
  const { total, byRunner } = summarize({
    reports,
    exitCodes,
    extraFailed: opts.failed,
    testExitCode: Number.isNaN(opts.testExitCode) ? 1 : opts.testExitCode,
  });
  for (const runner of RUNNERS) {
    const c = byRunner[runner];
    const missing = reports[runner] === undefined ? " (report missing: runner crashed?)" : "";
    const code = exitCodes[runner] !== undefined ? ` exit=${exitCodes[runner]}` : "";
    console.log(`  ${runner.padEnd(10)} passed=${c.passed} failed=${c.failed} skipped=${c.skipped}${code}${missing}`);
  }
  if (opts.failed > 0) console.log(`  other      failed=${opts.failed} (typecheck/lint/setup steps)`);
  console.log(formatLine(total));
  process.exitCode = total.failed > 0 ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
