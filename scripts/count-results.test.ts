import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import {
  countPlaywright,
  countRunner,
  countVitest,
  formatLine,
  readReports,
  summarize,
} from "./count-results.mjs";

// Trimmed from real reports written by vitest 4.1 and Playwright 1.65 on this repo's versions.
const assertion = (status: string) => ({ ancestorTitles: [], fullName: status, status, title: status, failureMessages: [], meta: {}, tags: [] });

const vitestGreen = {
  numTotalTestSuites: 2,
  numPassedTestSuites: 2,
  numFailedTestSuites: 0,
  numPendingTestSuites: 0,
  numTotalTests: 5,
  numPassedTests: 3,
  numFailedTests: 0,
  numPendingTests: 1,
  numTodoTests: 1,
  success: true,
  testResults: [
    {
      name: "/repo/server/a.test.ts",
      status: "passed",
      message: "",
      assertionResults: ["passed", "passed", "passed", "skipped", "todo"].map(assertion),
    },
  ],
};

const vitestRed = {
  numTotalTestSuites: 3,
  numPassedTestSuites: 0,
  numFailedTestSuites: 3,
  numPendingTestSuites: 0,
  numTotalTests: 5,
  numPassedTests: 1,
  numFailedTests: 1,
  numPendingTests: 2,
  numTodoTests: 1,
  success: false,
  testResults: [
    {
      name: "/repo/server/a.test.ts",
      status: "failed",
      message: "",
      assertionResults: ["passed", "failed", "skipped", "todo", "skipped"].map(assertion),
    },
    // A file that failed to import: no tests collected, only a file-level error.
    {
      name: "/repo/server/b.test.ts",
      status: "failed",
      message: "Cannot find module './does-not-exist'",
      assertionResults: [],
    },
  ],
};

const playwrightReport = (stats: Partial<Record<"expected" | "unexpected" | "flaky" | "skipped", number>>, errors: string[] = []) => ({
  config: {},
  suites: [],
  errors: errors.map((message) => ({ message })),
  stats: { startTime: "2026-01-01T00:00:00.000Z", duration: 1, expected: 0, unexpected: 0, flaky: 0, skipped: 0, ...stats },
});

describe("countVitest", () => {
  it("counts passed, and pending + todo as skipped", () => {
    expect(countVitest(vitestGreen)).toEqual({ passed: 3, failed: 0, skipped: 2 });
  });

  it("adds a failed file that has no failed test (import error) as one failure", () => {
    expect(countVitest(vitestRed)).toEqual({ passed: 1, failed: 2, skipped: 3 });
  });

  it("counts success=false with no failed test as one failure", () => {
    expect(countVitest({ ...vitestGreen, success: false, testResults: [] })).toMatchObject({ failed: 1 });
  });

  it("tolerates junk", () => {
    expect(countVitest(null)).toEqual({ passed: 0, failed: 0, skipped: 0 });
    expect(countVitest({ numPassedTests: "3", numFailedTests: -1 })).toEqual({ passed: 0, failed: 0, skipped: 0 });
  });
});

describe("countPlaywright", () => {
  it("counts expected + flaky as passed, unexpected as failed", () => {
    expect(countPlaywright(playwrightReport({ expected: 4, flaky: 1, unexpected: 2, skipped: 3 }))).toEqual({
      passed: 5,
      failed: 2,
      skipped: 3,
    });
  });

  it("counts each global error (spec that does not load, webServer, no tests) as a failure", () => {
    const report = playwrightReport({}, ["Error: Process from config.webServer was not able to start. Exit code: 1"]);
    expect(countPlaywright(report)).toEqual({ passed: 0, failed: 1, skipped: 0 });
    expect(countPlaywright(playwrightReport({ expected: 2 }, ["Error: No tests found", "x"]))).toMatchObject({ failed: 2 });
  });
});

describe("countRunner", () => {
  it("counts a missing report as one failure", () => {
    expect(countRunner("vitest", undefined)).toEqual({ passed: 0, failed: 1, skipped: 0 });
    expect(countRunner("playwright", undefined, 0)).toEqual({ passed: 0, failed: 1, skipped: 0 });
  });

  it("counts a non-zero exit with a clean report as one failure", () => {
    expect(countRunner("vitest", vitestGreen, 1)).toEqual({ passed: 3, failed: 1, skipped: 2 });
    expect(countRunner("vitest", vitestGreen, 0)).toEqual({ passed: 3, failed: 0, skipped: 2 });
    // Failures already counted: the exit code adds nothing.
    expect(countRunner("vitest", vitestRed, 1)).toMatchObject({ failed: 2 });
  });
});

describe("summarize", () => {
  it("adds both runners and extra failures", () => {
    const { total, byRunner } = summarize({
      reports: { vitest: vitestGreen, playwright: playwrightReport({ expected: 2, skipped: 1 }) },
      exitCodes: { vitest: 0, playwright: 0 },
      extraFailed: 1,
    });
    expect(byRunner.vitest).toEqual({ passed: 3, failed: 0, skipped: 2 });
    expect(byRunner.playwright).toEqual({ passed: 2, failed: 0, skipped: 1 });
    expect(total).toEqual({ passed: 5, failed: 1, skipped: 3 });
    expect(formatLine(total)).toBe("5 passed, 1 failed, 3 skipped");
  });

  it("counts a crashed runner (no report) as failed and keeps the other's counts", () => {
    const { total } = summarize({ reports: { vitest: vitestGreen } });
    expect(total).toEqual({ passed: 3, failed: 1, skipped: 2 });
  });

  it("counts a failed test command with nothing else failed as one failure", () => {
    const reports = { vitest: vitestGreen, playwright: playwrightReport({ expected: 1 }) };
    expect(summarize({ reports, testExitCode: 2 }).total.failed).toBe(1);
    expect(summarize({ reports, testExitCode: 0 }).total.failed).toBe(0);
  });
});

describe("readReports and the CLI", () => {
  const script = fileURLToPath(new URL("./count-results.mjs", import.meta.url));
  let dir = "";
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const cli = (...args: string[]) => {
    const r = spawnSync(process.execPath, [script, "--reports", dir, ...args], { encoding: "utf8" });
    const lines = r.stdout.trimEnd().split("\n");
    return { status: r.status, last: lines[lines.length - 1], stderr: r.stderr };
  };

  it("reads reports and exit codes; a missing or unreadable report is absent", () => {
    dir = mkdtempSync(join(tmpdir(), "count-results-"));
    writeFileSync(join(dir, "vitest.json"), JSON.stringify(vitestGreen));
    writeFileSync(join(dir, "playwright.json"), "{ truncated");
    writeFileSync(join(dir, "runners.json"), JSON.stringify({ vitest: { exitCode: 0 }, playwright: { exitCode: 1 } }));
    const { reports, exitCodes } = readReports(dir);
    expect(reports.vitest).toEqual(vitestGreen);
    expect(reports.playwright).toBeUndefined();
    expect(exitCodes).toEqual({ vitest: 0, playwright: 1 });
  });

  it("prints one closing line and exits 0 when all passed", () => {
    dir = mkdtempSync(join(tmpdir(), "count-results-"));
    writeFileSync(join(dir, "vitest.json"), JSON.stringify(vitestGreen));
    writeFileSync(join(dir, "playwright.json"), JSON.stringify(playwrightReport({ expected: 2, flaky: 1 })));
    expect(cli()).toMatchObject({ status: 0, last: "6 passed, 0 failed, 2 skipped" });
  });

  it("exits 1 on failures, missing reports and extra failed steps", () => {
    dir = mkdtempSync(join(tmpdir(), "count-results-"));
    expect(cli()).toMatchObject({ status: 1, last: "0 passed, 2 failed, 0 skipped" });
    writeFileSync(join(dir, "vitest.json"), JSON.stringify(vitestRed));
    writeFileSync(join(dir, "playwright.json"), JSON.stringify(playwrightReport({ expected: 1 })));
    expect(cli("--failed", "2")).toMatchObject({ status: 1, last: "2 passed, 4 failed, 3 skipped" });
    writeFileSync(join(dir, "vitest.json"), JSON.stringify(vitestGreen));
    expect(cli("--failed=1")).toMatchObject({ status: 1, last: "4 passed, 1 failed, 2 skipped" });
    expect(cli("--test-exit-code", "1")).toMatchObject({ status: 1, last: "4 passed, 1 failed, 2 skipped" });
    expect(cli()).toMatchObject({ status: 0, last: "4 passed, 0 failed, 2 skipped" });
  });
});
