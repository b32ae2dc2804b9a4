import { expect, test } from "@playwright/test";
import { axeViolations } from "./axe";
import { createTeam, panelTab } from "./helpers";

// The instance owner's tool defaults: set on the Account page, a new team starts with them.

test("a tool the instance owner turns off by default is off in a new team", async ({ page }) => {
  const mode = (tool: string) => page.getByRole("combobox", { name: `Mode of ${tool}` });
  await page.goto("/account");
  const defaults = page.getByRole("region", { name: "Tools in new teams" });
  await expect(defaults.getByRole("combobox", { name: "Mode of workspace_delete" })).toHaveValue("allow");
  const violations = await axeViolations(page);
  expect(violations.map((v) => v.id)).toEqual([]);
  await mode("workspace_delete").selectOption("off");
  try {
    await page.reload();
    await expect(mode("workspace_delete")).toHaveValue("off");

    await createTeam(page, "Defaults team");
    await panelTab(page, "Tools");
    await expect(mode("workspace_delete")).toHaveValue("off");
    await expect(mode("workspace_write")).toHaveValue("allow");
  } finally {
    // Later tests' teams start with the built-in defaults again.
    await page.goto("/account");
    await mode("workspace_delete").selectOption("allow");
    await page.reload();
    await expect(mode("workspace_delete")).toHaveValue("allow");
  }
});
