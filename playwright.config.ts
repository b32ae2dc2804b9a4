import { defineConfig, devices } from "@playwright/test";
import { OWNER_STATE } from "./e2e/accounts";
import { chromiumLaunchOptions } from "./e2e/chromium";

// The e2e server (scripts/e2e-server.ts) creates its own fresh database, builds if needed and
// serves the app on PORT. Its instance is fresh: the setup project creates the owner account
// through the first visitor's page, and every test starts signed in as that owner.
const port = Number.parseInt(process.env.E2E_PORT ?? "3100", 10);
const baseURL = `http://127.0.0.1:${port}/`;

export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  forbidOnly: !!process.env.CI,
  retries: 0,
  workers: 1,
  fullyParallel: false,
  reporter: [["list"], ["json", { outputFile: "reports/playwright.json" }]],
  use: {
    baseURL,
    screenshot: "only-on-failure",
    trace: "retain-on-failure",
  },
  projects: [
    {
      name: "setup",
      testMatch: /\.setup\.ts$/,
      use: { ...devices["Desktop Chrome"], launchOptions: chromiumLaunchOptions },
    },
    {
      name: "chromium",
      dependencies: ["setup"],
      use: { ...devices["Desktop Chrome"], launchOptions: chromiumLaunchOptions, storageState: OWNER_STATE },
    },
  ],
  webServer: {
    command: "node --import tsx scripts/e2e-server.ts",
    url: baseURL,
    env: { PORT: String(port) },
    timeout: 180_000,
    reuseExistingServer: false,
    // SIGTERM lets the server close its turns and drop its database (the default is SIGKILL).
    gracefulShutdown: { signal: "SIGTERM", timeout: 10_000 },
    stdout: "pipe",
    stderr: "pipe",
  },
});
