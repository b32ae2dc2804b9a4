import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "~": fileURLToPath(new URL(".", import.meta.url)) } },
  test: {
    include: ["server/**/*.test.ts", "shared/**/*.test.ts", "components/**/*.test.ts", "scripts/**/*.test.ts"],
    globalSetup: ["server/testing/global-setup.ts"],
    pool: "forks",
    // Two test files at once: they wait on Postgres and child processes far more than they
    // compute, and each has its own database (the default on a 2-core machine is one).
    maxWorkers: 2,
    // A worker runs file after file in one process: each file has its own database and starts
    // its own runtimes, and a fresh process per file cost about 2 s of start-up and imports each.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
