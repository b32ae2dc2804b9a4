import { expect, test } from "@playwright/test";
import { agentStatus, createTeam, finalAnswer, send, transcript, panelTab } from "./helpers";

// A team budget in the room, end to end with the keyless model (its tokens count): a member
// sets a budget too small for the Lead's first step; the room says so with the figures, the
// Lead is paused with its prompt waiting, nothing is spent; raising the budget resumes the work,
// and the team finishes as it would have. (Stops at a step's end: server/team/budget.test.ts.)

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
    const banner = p.getByRole("alert").filter({ hasText: "Paused (budget) (" });
    await expect(banner).toBeVisible({ timeout: 60_000 });
    // The step would have crossed the budget, so it never started: nothing is spent, and the
    // room says what a step needs beside what is left.
    await expect(banner).toContainText(/\(0 of 1 tokens\): the next step needs about [\d,]+ tokens, and 1 tokens are left\./);
    await expect(agentStatus(p, "Paused (budget)")).toBeVisible();
  }
  // The prompt waits, queued, and the transcript has nothing yet.
  await expect(page.getByRole("region", { name: "Queued prompts" })).toContainText("Build a tiny todo app");
  await expect(transcript(page)).toContainText("No messages yet");
  await panelTab(page, "Activity");
  await expect(page.getByRole("region", { name: "Recent activity" })).toContainText("set the team budget to 1 tokens");

  // Raise: no token limit, and a cost limit this run does not reach (the e2e server prices the
  // keyless model at $1 in, $5 out per million tokens).
  await budget.getByRole("button", { name: "Raise budget" }).click();
  await budget.getByLabel("token budget").fill("");
  await budget.getByLabel("cost budget in USD").fill("5");
  await budget.getByRole("button", { name: "Save budget" }).click();
  await expect(budget).toContainText(/Budget: (\$[\d.]+|<\$0\.0001) of \$5\.00/);
  for (const p of [page, other]) await expect(p.getByRole("alert").filter({ hasText: "Paused (budget) (" })).toHaveCount(0);
  await expect(finalAnswer(page)).toBeVisible({ timeout: 120_000 });
});
