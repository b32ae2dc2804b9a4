import { expect, test } from "@playwright/test";
import { createTeam, finalAnswer, send, transcript, panelTab } from "./helpers";

// A team budget in the room, end to end with the keyless model (its tokens count): a member
// sets a budget the Lead's first step reaches; the room says so with the figures, the Lead's
// turn ends at the step boundary and the teammates never start; raising the budget resumes the
// work, and the team finishes as it would have.

test("a reached budget stops the team with the figures shown; raising it resumes the work", async ({ page, browser }) => {
  test.setTimeout(180_000);
  const teamId = await createTeam(page, "Budget team");
  const budget = page.getByLabel("team budget");
  await expect(budget).toContainText("No budget");

  // A bad figure is refused in the form, before any request.
  await budget.getByRole("button", { name: "Set budget" }).click();
  await budget.getByLabel("token budget").fill("12.5");
  await expect(budget.getByRole("button", { name: "Save budget" })).toBeDisabled();
  await expect(budget).toContainText("Tokens must be a whole number");
  await budget.getByLabel("token budget").fill("1");
  await budget.getByRole("button", { name: "Save budget" }).click();
  await expect(budget).toContainText("Budget: 0 of 1 tokens");

  // A second person's view of the room shows the same stop, live.
  const other = await (await browser.newContext({ storageState: await page.context().storageState() })).newPage();
  await other.goto(`/teams/${teamId}`);

  await send(page, "Build a tiny todo app");
  for (const p of [page, other]) {
    const banner = p.getByRole("alert").filter({ hasText: "Team budget reached" });
    await expect(banner).toBeVisible({ timeout: 60_000 });
    await expect(banner).toContainText(/\(\d{1,3}(,\d{3})* of 1 tokens\)/);
  }
  await expect(transcript(page).getByRole("note").filter({ hasText: "Turn stopped: the team budget was reached" })).toBeVisible();
  const roster = page.getByRole("region", { name: "Roster" });
  await expect(roster.getByRole("button", { name: /researcher/ })).toBeVisible();
  await panelTab(page, "Activity");
  await expect(page.getByRole("region", { name: "Recent activity" })).toContainText("set the team budget to 1 tokens");

  // Raise: no token limit, and a cost limit this run does not reach (the e2e server prices the
  // keyless model at $1 in, $5 out per million tokens).
  await budget.getByRole("button", { name: "Raise budget" }).click();
  await budget.getByLabel("token budget").fill("");
  await budget.getByLabel("cost budget in USD").fill("5");
  await budget.getByRole("button", { name: "Save budget" }).click();
  await expect(budget).toContainText(/Budget: (\$[\d.]+|<\$0\.0001) of \$5\.00/);
  for (const p of [page, other]) await expect(p.getByRole("alert").filter({ hasText: "Team budget reached" })).toHaveCount(0);
  await expect(finalAnswer(page)).toBeVisible({ timeout: 120_000 });
});
