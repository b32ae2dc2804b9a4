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
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
