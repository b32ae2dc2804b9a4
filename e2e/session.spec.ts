import { expect, test } from "@playwright/test";
import { OWNER } from "./accounts";
import { agent, agentStatus, createTeam, finalAnswer, send, transcript } from "./helpers";

// One agent end to end: real server, real Postgres, keyless model, real Chromium.

test("a prompt streams its reply live, and a reload mid-stream shows the same transcript", async ({ page }) => {
  await createTeam(page, "Picnic planning");
  await send(page, "Plan a picnic for six people");
  const prompt = transcript(page).getByRole("article", { name: "Prompt" });
  await expect(prompt).toHaveCount(1);
  await expect(prompt).toContainText("Plan a picnic for six people");

  // Catch the reply while it is still streaming.
  const streaming = transcript(page).locator("article[data-streaming]");
  await expect(streaming).toBeVisible();
  const partial = (await streaming.locator(".text").textContent()) ?? "";
  expect(partial.length).toBeGreaterThan(0);

  await page.reload();
  const replies = transcript(page).getByRole("article", { name: "Reply" });
  // Nothing shown before the reload is lost, nothing is doubled.
  await expect(replies.first().locator(".text")).toContainText(partial.trim());
  await expect(transcript(page).getByRole("article", { name: "Prompt" })).toHaveCount(1);
  // The keyless Lead runs its team and finishes with an aggregated answer after the reload.
  await expect(finalAnswer(page)).toBeVisible({ timeout: 60_000 });
  await expect(agentStatus(page, "Idle")).toBeVisible({ timeout: 20_000 });
  await expect(transcript(page).locator("article[data-streaming]")).toHaveCount(0);
  // The live-built transcript equals the one a fresh load reads from the log.
  const live = await transcript(page).getByRole("article").allTextContents();
  await page.reload();
  await expect(finalAnswer(page)).toBeVisible();
  expect(await transcript(page).getByRole("article").allTextContents()).toEqual(live);
});

test("queued prompts run as separate turns; Stop ends the running turn and keeps the queue", async ({ page }) => {
  await createTeam(page, "Queue and stop");
  await send(page, "First: a long answer please");
  await expect(transcript(page).locator("article[data-streaming]")).toBeVisible();
  await send(page, "Second prompt");
  const queue = page.getByRole("region", { name: "Queued prompts" });
  await expect(queue.getByRole("listitem")).toHaveCount(1);
  await expect(queue).toContainText("Second prompt");

  await page.getByRole("button", { name: "Stop", exact: true }).click();
  // The turn's end names who pressed Stop.
  await expect(transcript(page).getByText(`Turn aborted · stopped by ${OWNER.name}`)).toBeVisible();
  // The queued prompt was kept and now runs as its own turn.
  await expect(transcript(page).getByRole("article", { name: "Prompt" }).nth(1)).toContainText("Second prompt");
  await expect(queue.getByRole("listitem")).toHaveCount(0);
  await expect(agentStatus(page, "Idle")).toBeVisible({ timeout: 60_000 });
});

test("HTML and script in a prompt render as inert text", async ({ page }) => {
  await createTeam(page, "Inert content");
  const hostile = `<img src=x onerror="window.__xss=1"><script>window.__xss=2</script><b>bold?</b>`;
  await send(page, hostile);
  await expect(transcript(page).getByRole("article", { name: "Prompt" })).toContainText(hostile);
  await expect(agentStatus(page, "Idle")).toBeVisible({ timeout: 60_000 });
  expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
  await expect(transcript(page).locator("img, script:not([src]), b")).toHaveCount(0);
});

test("forking from a message starts a new team with the history up to that turn", async ({ page }) => {
  await createTeam(page, "Fork source");
  await send(page, "/tool list_agents {}");
  await expect(transcript(page).getByText("The list_agents tool returned")).toBeVisible({ timeout: 30_000 });
  await expect(agentStatus(page, "Idle")).toBeVisible({ timeout: 30_000 });
  const source = page.url();
  // Each message's actions are in one menu.
  await transcript(page).getByRole("article", { name: "Prompt" }).getByRole("button", { name: "Message actions" }).click();
  await page.getByRole("menuitem", { name: "Fork a new team from here" }).click();
  await expect(page).not.toHaveURL(source);
  await expect(page.getByRole("heading", { name: "Fork source (fork)", level: 1 })).toBeVisible();
  // Whoever forks owns the fork, and it says who made it.
  await expect(page.getByLabel("your role: owner")).toBeVisible();
  await expect(agent(page).getByText(`forked by ${OWNER.name}`)).toBeVisible();
  // The fork holds the completed turn, and it is an independent team: only its Lead.
  await expect(transcript(page).getByRole("article", { name: "Prompt" })).toContainText("/tool list_agents");
  await expect(page.getByRole("region", { name: "Roster" }).getByRole("button")).toHaveCount(2); // lead + "Add a teammate"
});
