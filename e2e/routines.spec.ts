import { expect, test } from "@playwright/test";
import { axeViolations } from "./axe";
import { createTeam, panelTab, roomSection, transcript } from "./helpers";

// Routines end to end with the keyless model: a member writes one in the Routines tab, sees its
// next five times (and a typed error for a cron that does not parse) before saving, runs it now
// (the Lead gets the prompt, named as the routine's), follows its run, pauses and deletes it.

test("a routine is written with its next times shown, runs now as its owner's prompt, pauses and is deleted", async ({ page }) => {
  test.setTimeout(120_000);
  await createTeam(page, "Routine team");
  await panelTab(page, "Routines");
  const panel = page.getByRole("tabpanel", { name: "Routines" });
  await expect(panel.getByText("No routines yet.")).toBeVisible();
  await panel.getByRole("button", { name: "New routine" }).click();
  const form = panel.getByRole("form", { name: "New routine" });
  await form.getByLabel("Name").fill("Morning check");
  await form.getByLabel("Prompt to the Lead").fill("Check the board and say what is open");
  await form.getByLabel("Cron (minute hour day month weekday)").fill("0 25 * * *");
  await expect(form.getByRole("status")).toContainText("Invalid value for hour", { timeout: 10_000 });
  await form.getByLabel("Cron (minute hour day month weekday)").fill("0 7 * * 1-5");
  await form.getByLabel("Time zone").fill("Europe/Berlin");
  await expect(form.getByRole("status")).toHaveText(/^Next runs: (.+ · ){4}.+$/, { timeout: 10_000 });
  expect((await axeViolations(page)).map((v) => v.id)).toEqual([]);
  await form.getByRole("button", { name: "Create routine" }).click();

  const routine = panel.getByRole("listitem", { name: "Routine Morning check" });
  await expect(routine).toContainText("cron 0 7 * * 1-5 (Europe/Berlin)");
  await expect(routine).toContainText("Active");
  await routine.getByRole("button", { name: "Run now" }).click();
  await expect(transcript(page).getByRole("article", { name: /^Prompt from Olive Owner by routine Morning check$/ })).toBeVisible({ timeout: 20_000 });
  await routine.getByText("Runs", { exact: true }).click();
  await expect(routine.getByRole("list", { name: "Runs" }).getByRole("listitem")).toContainText(/run now/);
  await expect(routine.getByRole("link", { name: "its prompt in the transcript" })).toBeVisible({ timeout: 20_000 });

  await routine.getByRole("button", { name: "Pause" }).click();
  await expect(routine).toContainText("Paused");
  await routine.getByRole("button", { name: "Delete routine Morning check" }).click();
  await page.getByRole("alertdialog", { name: 'Delete routine "Morning check"?' }).getByRole("button", { name: "Delete the routine" }).click();
  await expect(panel.getByText("No routines yet.")).toBeVisible();

  // On a phone the tab is in the team panel's screen; the form passes axe there too.
  await page.setViewportSize({ width: 390, height: 844 });
  await roomSection(page, "Tasks");
  await panelTab(page, "Routines");
  await panel.getByRole("button", { name: "New routine" }).click();
  await expect(panel.getByRole("form", { name: "New routine" }).getByRole("status")).toHaveText(/^Next runs: /, { timeout: 10_000 });
  expect((await axeViolations(page)).map((v) => v.id)).toEqual([]);
});
