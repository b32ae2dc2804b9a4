import { expect, test } from "@playwright/test";
import { axeViolations } from "./axe";
import { createTeam, panelTab, send, transcript } from "./helpers";

// Plan approval, end to end with the keyless model (`/tool` lines): with the setting on, the
// tasks the Lead creates wait as a plan in the room; "Revise" sends the note to the Lead; the
// Lead's changed task forms the next plan, which a person approves; then it may start.

test("the Lead's tasks wait as a plan; revised with a note, changed, approved, started", async ({ page }) => {
  test.setTimeout(120_000);
  await createTeam(page, "Plans team");
  await panelTab(page, "Tools");
  await page.getByRole("checkbox", { name: "The Lead's plans wait for approval" }).check();
  await expect(page.getByRole("checkbox", { name: "The Lead's plans wait for approval" })).toBeChecked();

  await send(page, ['/tool team_task_create {"subject":"Draft the outline","description":""}', '/tool team_task_create {"subject":"Write it","description":""}'].join("\n"));
  const plans = page.getByRole("region", { name: /Plans waiting for approval/ });
  const plan = plans.getByRole("listitem", { name: "The Lead's plan of 2 tasks" });
  await expect(plan).toBeVisible({ timeout: 20_000 });
  await expect(plan).toContainText("task-1 Draft the outline");
  await expect(plan).toContainText("task-2 Write it");
  const violations = await axeViolations(page);
  expect(violations.map((v) => v.id)).toEqual([]);

  await expect(plan.getByRole("button", { name: "Revise" })).toBeDisabled();
  await plan.getByLabel("Note to the Lead about its plan").fill("Outline first, one task");
  await plan.getByRole("button", { name: "Revise" }).click();
  await expect(plans).toHaveCount(0);
  await expect(transcript(page).getByRole("note").filter({ hasText: "asks you to revise your plan (task-1, task-2) before anyone starts it: Outline first, one task" })).toBeVisible({
    timeout: 20_000,
  });

  // The Lead changes task-1: it forms the next plan, which is approved; then it can be claimed.
  await send(page, '/tool team_task_update {"task_id":"task-1","expected_revision":1,"action":"edit","subject":"Outline, v2"}');
  const next = plans.getByRole("listitem", { name: "The Lead's plan of 1 tasks" });
  await expect(next).toContainText("task-1 Outline, v2", { timeout: 20_000 });
  await next.getByRole("button", { name: "Approve plan" }).click();
  await expect(plans).toHaveCount(0);
  await send(page, '/tool team_task_update {"task_id":"task-1","expected_revision":2,"action":"claim"}');
  await expect(transcript(page).getByText(/Tool result: team_task_update/).last()).toBeVisible({ timeout: 20_000 });
  await panelTab(page, "Tasks");
  await expect(page.getByRole("region", { name: "Tasks" }).getByText("Outline, v2")).toBeVisible();
});
