import { expect, test } from "@playwright/test";
import { axeViolations } from "./axe";
import { anonymousContext, signUpOverApi, trpcMutation } from "./accounts";
import { agentStatus, createTeam, finalAnswer, panelTab, send, transcript } from "./helpers";

// Team memory end to end with the keyless model and two people: the Lead proposes a memory of
// its work, a member approves it from the inbox while the owner's Memory tab follows live, the
// memory links to the step that proposed it, the instance's owner shares it, and a new team
// that reads the shared memory has its Lead find it when asked about earlier work.

test("an agent proposes, another person approves from the inbox, and a new team's agent finds it", async ({ page, browser, baseURL }) => {
  test.setTimeout(180_000);
  const teamId = await createTeam(page, "Memory team");
  const invite = await trpcMutation(page.request, baseURL!, "people.invite", { teamId, role: "member" });
  const { token } = ((await invite.json()) as { result: { data: { json: { token: string } } } }).result.data.json;
  const context = await anonymousContext(browser, baseURL!);
  const max = await context.newPage();
  await signUpOverApi(max.request, baseURL!, { name: "Max Memory", email: "max@memory.test", password: "max-password-1" }, token);

  await send(page, "Plan the invoices launch");
  await expect(finalAnswer(page)).toBeVisible({ timeout: 90_000 });
  await expect(transcript(page).getByText("I proposed a memory of this work for the team; agents use it once a person approves it.")).toBeVisible();
  await expect(transcript(page).getByText("Proposed a memory: see the Memory tab")).toHaveCount(1);
  await panelTab(page, "Memory");
  await expect(page.getByRole("tab", { name: "Memory (1)" })).toBeVisible();
  const proposal = page.getByRole("list", { name: "Proposed memories" }).getByRole("listitem");
  await expect(proposal).toHaveCount(1);
  await expect(proposal).toContainText('"Plan the invoices launch" was done in two steps');
  for (const width of [1440, 390]) {
    await page.setViewportSize({ width, height: 900 });
    expect((await axeViolations(page)).map((v) => v.id)).toEqual([]);
  }
  await page.setViewportSize({ width: 1440, height: 900 });

  // The member approves it from their inbox; the owner's tab moves it to the approved ones, live.
  await max.goto("/notifications");
  const note = max.getByRole("listitem", { name: "Unread: lead proposes a memory for Memory team" });
  await expect(note).toBeVisible({ timeout: 20_000 });
  for (const width of [1440, 390]) {
    await max.setViewportSize({ width, height: 900 });
    expect((await axeViolations(max)).map((v) => v.id)).toEqual([]);
  }
  await max.setViewportSize({ width: 1440, height: 900 });
  await note.getByRole("button", { name: "Approve memory" }).click();
  await expect(note.getByRole("button", { name: "Approve memory" })).toHaveCount(0);
  await expect(page.getByRole("tab", { name: "Memory", exact: true })).toBeVisible({ timeout: 20_000 });
  await expect(page.getByText("No proposals waiting.")).toBeVisible();
  const approved = page.getByRole("list", { name: "Approved memories" }).getByRole("listitem");
  await expect(approved).toContainText("Approved by Max Memory");
  await context.close();

  // Its source: the link opens the Lead's transcript at the step that proposed it.
  await approved.getByRole("link", { name: /^step \d+ of its transcript$/ }).click();
  await expect(page).toHaveURL(/[?&]seq=\d+/);

  // The instance's owner shares it; a new team reading the shared memory finds it.
  await panelTab(page, "Memory");
  await approved.getByRole("button", { name: "Share with every team" }).click();
  await expect(approved.getByRole("status")).toHaveText("Shared with every team");
  await createTeam(page, "Memory newcomers");
  await panelTab(page, "Memory");
  const saved = page.waitForResponse((r) => r.url().includes("memory.setSettings") && r.ok());
  await page.getByRole("checkbox", { name: "Agents also read the instance's shared memory" }).check();
  await saved;
  await send(page, "What did the team decide earlier about the invoices launch?");
  const answer = transcript(page).getByRole("article", { name: "Reply" }).filter({ hasText: "From the team's memory" });
  await expect(answer).toBeVisible({ timeout: 30_000 });
  await expect(answer).toContainText('"Plan the invoices launch" was done in two steps');
  await expect(transcript(page).getByText(/Tool result: memory_search/)).toHaveCount(1);
  await expect(agentStatus(page, "Idle")).toBeVisible({ timeout: 20_000 });
});
