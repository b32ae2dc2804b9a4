import { expect, test } from "@playwright/test";
import { readFile } from "node:fs/promises";
import { createTeam, panelTab } from "./helpers";

// The audit log, as the instance owner reads it: a tool policy change made in a team is there
// with who made it, the filter narrows to it, and the CSV export holds it.

test("the owner finds a tool policy change in the audit log, filters to it and exports it as CSV", async ({ page }) => {
  test.setTimeout(90_000);
  const title = `Audited team ${Date.now()}`;
  await createTeam(page, title);
  await panelTab(page, "Tools");
  await page.getByRole("combobox", { name: "Mode of workspace_delete" }).selectOption("ask");
  await expect(page.getByRole("combobox", { name: "Mode of workspace_delete" })).toHaveValue("ask");

  await page.goto("/account");
  await page.getByRole("link", { name: "Open the audit log" }).click();
  await expect(page.getByRole("heading", { name: "Audit log", level: 1 })).toBeVisible();
  const filter = page.getByRole("form", { name: "Filter the audit log" });
  await filter.getByLabel("Kind", { exact: true }).selectOption("tool_policy_set");
  await filter.getByLabel("Team", { exact: true }).selectOption({ label: title });
  await filter.getByRole("button", { name: "Apply" }).click();
  const rows = page.getByRole("table").getByRole("row");
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(1)).toContainText("tool policy set");
  await expect(rows.nth(1)).toContainText(title);
  await expect(rows.nth(1)).toContainText('"mode":"ask"');

  const download = page.waitForEvent("download");
  await filter.getByRole("button", { name: "Export CSV" }).click();
  const csv = await readFile((await (await download).path())!, "utf8");
  const lines = csv.trim().split("\r\n");
  expect(lines[0]).toBe("time,kind,actor,actor_id,team,team_id,ip,detail");
  expect(lines).toHaveLength(2);
  expect(lines[1]).toContain(`tool_policy_set`);
  expect(lines[1]).toContain(title);
  await expect(page.getByRole("status").filter({ hasText: "Exported 1 entry." })).toBeVisible();
});
