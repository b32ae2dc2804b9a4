import { existsSync } from "node:fs";
import type { LaunchOptions } from "@playwright/test";

// How Chromium is launched by the e2e tests and the browser benchmarks (bench/browser.ts). A
// system Chromium (Debian's `chromium` package) where there is one; CHROMIUM_PATH overrides.
// Elsewhere Playwright's own browser (`npx playwright install chromium`) is used. The flags keep
// it off the network.
const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export const chromiumLaunchOptions: LaunchOptions = {
  ...(existsSync(chromiumPath) ? { executablePath: chromiumPath } : {}),
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
  ],
};
