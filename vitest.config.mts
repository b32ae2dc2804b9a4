import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "~": fileURLToPath(new URL(".", import.meta.url)) } },
  test: {
    include: ["server/**/*.test.ts", "components/**/*.test.ts", "scripts/**/*.test.ts"],
    globalSetup: ["server/testing/global-setup.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
