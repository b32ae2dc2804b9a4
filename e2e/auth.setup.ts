import { test as setup } from "@playwright/test";
import { createInstanceOwner, OWNER, OWNER_STATE } from "./accounts";

// The e2e server starts on a fresh database: its first visitor creates the owner account
// through the fresh-instance page. Every other test starts signed in with these cookies
// (database sessions: they survive a server restart).

setup("a fresh instance asks its first visitor for the owner account", async ({ page }, testInfo) => {
  await createInstanceOwner(page, OWNER, testInfo.outputPath("fresh-instance.png"));
  await page.context().storageState({ path: OWNER_STATE });
});
