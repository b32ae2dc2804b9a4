import { expect, test } from "@playwright/test";
import { OWNER } from "./accounts";
import { agent, agentStatus, createTeam, finalAnswer, panelTab, roomSection, send, transcript } from "./helpers";

// The team room end to end with the keyless model: the whole team scenario seen through the
// UI, live collaboration between two browsers, and conflicts on the task board.

test("the keyless team scenario plays out live: roster, board, mailbox and the Lead's answer", async ({ page }, testInfo) => {
  // The whole scenario (workspace steps included) takes 25–35 s on a busy machine: a budget, not a timing check.
  test.setTimeout(90_000);
  // Nothing leaves the machine: every request goes to the app itself.
  const foreign: string[] = [];
  page.on("request", (r) => {
    if (new URL(r.url()).hostname !== "127.0.0.1") foreign.push(r.url());
  });
  await createTeam(page, "Todo app team");
  await send(page, "Build a tiny todo app");

  const roster = page.getByRole("region", { name: "Roster" });
  await expect(roster.getByRole("button", { name: /^researcher \(teammate\)/ })).toBeVisible({ timeout: 30_000 });
  await expect(roster.getByRole("button", { name: /^implementer \(teammate\)/ })).toBeVisible();

  const completed = page.getByRole("region", { name: "Completed tasks" });
  await expect(completed.getByRole("listitem")).toHaveCount(2, { timeout: 60_000 });
  await expect(completed.getByRole("listitem", { name: /^task-1 Research/ })).toContainText("rev 3");
  await expect(completed.getByRole("listitem", { name: /^task-2 Implement/ })).toContainText("waits for task-1");

  await panelTab(page, "Mailbox");
  const mailbox = page.getByRole("region", { name: "Mailbox" });
  await expect(mailbox.getByRole("listitem", { name: /from researcher to implementer: consumed$/ })).toBeVisible({ timeout: 30_000 });
  await expect(mailbox.getByRole("listitem", { name: /from implementer to lead: consumed$/ })).toBeVisible({ timeout: 30_000 });

  await expect(finalAnswer(page)).toBeVisible({ timeout: 60_000 });
  await expect(agentStatus(page, "Idle")).toBeVisible({ timeout: 20_000 });
  await page.screenshot({ path: testInfo.outputPath("team-room-lead.png"), fullPage: true });

  // Selecting a teammate shows its transcript, including the message steered into its turn.
  await roster.getByRole("button", { name: /^implementer \(teammate\)/ }).click();
  await expect(agent(page, "implementer")).toBeVisible();
  const mail = transcript(page).getByRole("article", { name: "Team message from researcher" });
  await expect(mail).toBeVisible();
  // Names, never raw ids: the message's id is behind its menu.
  await expect(mail).not.toContainText("msg_");
  await expect(mail).toContainText("Research for task-1 is complete");
  await page.screenshot({ path: testInfo.outputPath("team-room-implementer.png"), fullPage: true });

  // A phone shows one part at a time: the transcript with its prompt box inside the first
  // screen, and a switcher to the agents, the board, the files and the people.
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(agent(page, "implementer")).toBeVisible();
  const box = await page.getByRole("textbox", { name: "Prompt" }).boundingBox();
  expect(box!.y + box!.height).toBeLessThanOrEqual(844);
  await expect(page.getByRole("region", { name: "Roster" })).toHaveCount(0);
  await roomSection(page, "Agents");
  await page.getByRole("region", { name: "Roster" }).getByRole("button", { name: /^lead \(lead\)/ }).click();
  await expect(agent(page, "lead")).toBeVisible();
  await roomSection(page, "Tasks");
  await expect(page.getByRole("region", { name: "Task board" })).toBeVisible();
  await roomSection(page, "Files");
  await expect(page).toHaveURL(/[?&]view=files$/);
  await expect(page.getByRole("link", { name: "result.md" })).toBeVisible();
  await roomSection(page, "People");
  await expect(page.getByRole("list", { name: "People in the room" })).toContainText("in Files");
  await roomSection(page, "Transcript");
  await expect(page).not.toHaveURL(/view=files/);
  await expect(agent(page, "lead")).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath("team-room-phone.png") });
  expect(foreign).toEqual([]);
});

test("two browsers on one team stay in sync", async ({ browser }) => {
  const a = await (await browser.newContext()).newPage();
  const b = await (await browser.newContext()).newPage();
  await createTeam(a, "Shared room");
  await b.goto(a.url());
  await expect(b.getByRole("heading", { name: "Shared room", level: 1 })).toBeVisible();

  await send(a, "/tool team_task_create {\"subject\":\"Shared task\",\"description\":\"seen by both\"}");
  await expect(transcript(b).getByRole("article", { name: "Prompt" })).toContainText("Shared task");
  await expect(b.getByRole("listitem", { name: "task-1 Shared task" })).toBeVisible({ timeout: 20_000 });
  await b.getByRole("button", { name: "Claim task-1" }).click();
  await expect(a.getByRole("region", { name: "In progress tasks" }).getByRole("listitem", { name: "task-1 Shared task" })).toBeVisible();
});

test("two people edit one task at once: the one who saves second keeps their text and chooses", async ({ browser }) => {
  const a = await (await browser.newContext()).newPage();
  const b = await (await browser.newContext()).newPage();
  await createTeam(a, "Conflicts");
  await send(a, "/tool team_task_create {\"subject\":\"Original subject\",\"description\":\"\"}");
  await expect(a.getByRole("listitem", { name: "task-1 Original subject" })).toBeVisible({ timeout: 20_000 });
  await b.goto(a.url());

  // Both start editing at revision 1; A saves first (revision 2).
  await b.getByRole("button", { name: "Edit task-1" }).click();
  const field = b.getByRole("textbox", { name: "Subject of task-1" });
  await field.fill("B's subject");
  await a.getByRole("button", { name: "Edit task-1" }).click();
  await a.getByRole("textbox", { name: "Subject of task-1" }).fill("A's subject");
  await a.getByRole("button", { name: "Save" }).click();
  await expect(a.getByRole("listitem", { name: "task-1 A's subject" })).toContainText("rev 2");
  // Escape cancels an edit without saving.
  await a.getByRole("button", { name: "Edit task-1" }).click();
  await a.getByRole("textbox", { name: "Subject of task-1" }).fill("never saved");
  await a.getByRole("textbox", { name: "Subject of task-1" }).press("Escape");
  await expect(a.getByRole("listitem", { name: "task-1 A's subject" })).toBeVisible();

  // B's save is stale: B's text stays, beside A's, and B chooses.
  await field.press("Enter");
  const conflict = b.getByRole("alert", { name: "task-1 changed while you edited it" });
  await expect(conflict).toContainText("Theirs");
  await expect(conflict).toContainText("A's subject");
  await expect(conflict).toContainText("B's subject");
  await conflict.getByRole("button", { name: "Keep mine" }).click();
  await expect(b.getByRole("listitem", { name: "task-1 B's subject" })).toContainText("rev 3");
  await expect(a.getByRole("listitem", { name: "task-1 B's subject" })).toBeVisible();

  // Taking theirs drops one's own text and keeps the other version.
  await a.getByRole("button", { name: "Edit task-1" }).click();
  await a.getByRole("textbox", { name: "Subject of task-1" }).fill("A again");
  await b.getByRole("button", { name: "Claim task-1" }).click();
  await expect(a.getByRole("listitem", { name: "task-1 B's subject" })).toContainText("rev 4");
  await a.getByRole("textbox", { name: "Subject of task-1" }).press("Enter");
  await a.getByRole("alert", { name: "task-1 changed while you edited it" }).getByRole("button", { name: "Take theirs" }).click();
  await expect(a.getByRole("listitem", { name: "task-1 B's subject" })).toContainText("rev 4");
});

test("a task update refused for another reason shows its message, not a conflict", async ({ page }) => {
  await createTeam(page, "Refusals");
  await send(page, "/tool team_task_create {\"subject\":\"Blocker\",\"description\":\"\"}");
  await expect(page.getByRole("listitem", { name: "task-1 Blocker" })).toBeVisible({ timeout: 20_000 });
  await send(page, "/tool team_task_create {\"subject\":\"Dependent\",\"description\":\"\",\"blocked_by\":[\"task-1\"]}");
  await expect(page.getByRole("listitem", { name: "task-2 Dependent" })).toBeVisible({ timeout: 20_000 });

  await page.getByRole("button", { name: "Delete task-1" }).click();
  const refusal = page.getByRole("region", { name: "Task board" }).getByRole("alert");
  await expect(refusal).toContainText("Not applied");
  await expect(refusal).toContainText("task-2 lists it as a blocker");
  // Not a stale revision: no "current task" view.
  await expect(refusal).not.toContainText("Current:");
  await expect(page.getByRole("listitem", { name: "task-1 Blocker" })).toBeVisible();
});

test("queue controls on the Lead: edit and remove queued prompts, steer one into the running turn", async ({ page }) => {
  // It waits for a whole team scenario before the edited prompt runs (see above).
  test.setTimeout(90_000);
  await createTeam(page, "Queue controls");
  await send(page, "Build something long");
  await send(page, "to be edited");
  await send(page, "to be removed");
  await send(page, "to be steered");
  const queue = page.getByRole("region", { name: "Queued prompts" });
  await expect(queue.getByRole("listitem")).toHaveCount(3);

  await queue.getByRole("listitem").filter({ hasText: "to be edited" }).getByRole("button", { name: "Edit" }).click();
  const edit = queue.getByRole("textbox", { name: "Queued prompt text" });
  await edit.fill("edited prompt");
  await edit.press("Enter");
  await expect(queue).toContainText("edited prompt");
  // Who queued each prompt, and who edited it.
  await expect(queue.getByRole("listitem").filter({ hasText: "edited prompt" })).toContainText(`queued by ${OWNER.name} · edited by ${OWNER.name}`);
  await expect(queue.getByRole("listitem").filter({ hasText: "to be removed" })).not.toContainText("edited by");

  // Removing offers Undo for a few seconds: undone, the prompt is back; left, it is gone.
  await queue.getByRole("listitem").filter({ hasText: "to be removed" }).getByRole("button", { name: "Remove" }).click();
  await expect(queue).not.toContainText("to be removed");
  await queue.getByRole("button", { name: "Undo" }).click();
  await expect(queue).toContainText("to be removed");
  await queue.getByRole("listitem").filter({ hasText: "to be removed" }).getByRole("button", { name: "Remove" }).click();
  await expect(queue.getByRole("status")).toContainText("Queued prompt removed");
  await expect(queue.getByRole("listitem")).toHaveCount(2, { timeout: 15_000 });
  await expect(queue).not.toContainText("to be removed");

  await queue.getByRole("listitem").filter({ hasText: "to be steered" }).getByRole("button", { name: "Steer now" }).click();
  await expect(queue).not.toContainText("to be steered");
  await expect(transcript(page).getByRole("article", { name: "Prompt" }).filter({ hasText: "to be steered" })).toBeVisible();
  // The edited prompt runs later as its own turn.
  await expect(transcript(page).getByRole("article", { name: "Prompt" }).filter({ hasText: "edited prompt" })).toBeVisible({
    timeout: 90_000,
  });
});

test("Stop the team asks first, then stops every working agent at once; a prompt starts it again", async ({ page }) => {
  test.setTimeout(90_000);
  await createTeam(page, "Stoppable team");
  await send(page, "Build a tiny todo app");
  const roster = page.getByRole("region", { name: "Roster" });
  await expect(roster.getByRole("button", { name: /^researcher \(teammate\)/ })).toBeVisible({ timeout: 30_000 });
  // The Lead works until both teammates are done: it is working now.
  await expect(agentStatus(page, "Working")).toBeVisible();

  await page.getByRole("button", { name: "Stop the team" }).click();
  const dialog = page.getByRole("alertdialog", { name: "Stop the whole team?" });
  await expect(dialog).toContainText("their turns end now");
  await expect(dialog).toContainText("lead");
  await dialog.getByRole("button", { name: "Stop the team" }).click();
  await expect(dialog).toHaveCount(0);

  await expect(agentStatus(page, "Stopped")).toBeVisible({ timeout: 20_000 });
  await expect(roster.getByRole("button", { name: /^lead \(lead\)/ })).toContainText("Stopped");
  await panelTab(page, "Activity");
  await expect(page.getByRole("region", { name: "Recent activity" })).toContainText(/stopped the team \(.*lead.*\)/);
  // Nothing runs while stopped: the button has nobody to stop.
  await expect(page.getByRole("button", { name: "Stop the team" })).toBeDisabled();

  await send(page, "Carry on");
  await expect(agentStatus(page, "Working")).toBeVisible({ timeout: 20_000 });
});

test("a team that does not exist, or is not yours, says so without saying which", async ({ page }) => {
  await page.goto("/teams/ses_no_such_team_000000000000");
  await expect(page.getByRole("heading", { name: "This team does not exist or you do not have access" })).toBeVisible({ timeout: 15_000 });
  await expect(page.getByRole("link", { name: "Back to your teams" })).toBeVisible();
});

test("the room shows its shape at once while the team's state is on its way", async ({ page }) => {
  const teamId = await createTeam(page, "Skeleton team");
  // Hold the team feed: the room has nothing to show yet.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await page.route("**/api/trpc/team.live**", async (route) => {
    await held;
    await route.continue();
  });
  await page.goto(`/teams/${teamId}`);
  await expect(page.getByRole("status").filter({ hasText: "Loading the team…" })).toBeAttached();
  await expect(page.locator(".skeleton-area")).toHaveCount(3);
  release();
  await expect(page.getByRole("region", { name: "Roster" })).toBeVisible({ timeout: 15_000 });
  await expect(page.locator(".skeleton-area")).toHaveCount(0);
});

test("every view of a room loads without a React error (hydration included) at 1440 and 390 px", async ({ page }) => {
  test.setTimeout(240_000);
  const teamId = await createTeam(page, "Hydration team");
  await send(page, "Build a tiny todo app");
  await expect(finalAnswer(page)).toBeVisible({ timeout: 60_000 });
  const errors: string[] = [];
  let at = "";
  page.on("pageerror", (e) => errors.push(`${at}: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`${at}: ${m.text()}`);
  });
  // A slow phone's pace: the page's parts hydrate one by one, and the account check may answer
  // before the room's part has hydrated (it then must still render as the server did).
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Emulation.setCPUThrottlingRate", { rate: 6 });
  for (const width of [1440, 390]) {
    await page.setViewportSize({ width, height: 900 });
    for (const query of ["", "?view=timeline", "?view=split&members=researcher,implementer", "?view=files&path=src%2Fresult.md", "?member=researcher"]) {
      at = `${width} px, ${query || "the agent view"}`;
      await page.goto(`/teams/${teamId}${query}`);
      await expect(page.getByRole("navigation", { name: "Room view" })).toBeVisible({ timeout: 15_000 });
      await expect(page.locator(".skeleton")).toHaveCount(0, { timeout: 15_000 });
    }
  }
  expect(errors).toEqual([]);
});
