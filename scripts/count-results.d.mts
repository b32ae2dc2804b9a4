// Types for scripts/count-results.mjs (plain JS so that it runs with bare `node`).
export interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}
export type Runner = "vitest" | "playwright";
export declare const RUNNERS: readonly ["vitest", "playwright"];
export declare function countVitest(report: unknown): Counts;
export declare function countPlaywright(report: unknown): Counts;
export declare function countRunner(runner: Runner, report: unknown, exitCode?: number): Counts;
export declare function summarize(input: {
  reports: Partial<Record<Runner, unknown>>;
  exitCodes?: Partial<Record<Runner, number>>;
  extraFailed?: number;
  testExitCode?: number;
}): { total: Counts; byRunner: Record<Runner, Counts> };
export declare function formatLine(c: Counts): string;
export declare function readJson(path: string): unknown;
export declare function readReports(dir: string): {
  reports: Partial<Record<Runner, unknown>>;
  exitCodes: Partial<Record<Runner, number>>;
};
