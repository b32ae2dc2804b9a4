import { expect, test, type Page } from "@playwright/test";
import { trpcMutation } from "./accounts";
import { agent, createTeam, roomView, send, transcript } from "./helpers";

// The whole team at once, end to end with the keyless model: the team timeline (a view of the
// room's centre) fills live while the team works (both teammates interleaved, in causal order),
// filters by member and kind, links to the moment in a transcript and to a file version; the
// split view shows two transcripts side by side, both live.

const timeline = (page: Page) => page.getByRole("region", { name: "Timeline" });
const entries = (page: Page) => timeline(page).getByRole("list", { name: "Timeline entries" }).getByRole("listitem");
const entryLink = (page: Page, name: RegExp) => timeline(page).getByRole("link", { name });
const column = (page: Page, name: string) => page.getByRole("group", { name: "Split view" }).getByRole("region", { name: `${name} in split view` });

/** The position of the first entry matching `re` in what the timeline shows now (-1: none). */
const position = (texts: string[], re: RegExp) => texts.findIndex((t) => re.test(t));

test("the timeline shows both teammates' work live and in order, filters, links to the moment; the split view shows two live transcripts", async ({
  browser,
  page,
  baseURL,
}, testInfo) => {
  test.setTimeout(240_000);
  await page.setViewportSize({ width: 1500, height: 950 });
  const teamId = await createTeam(page, "Timeline team");
  await roomView(page, "Timeline");
  await expect(page).toHaveURL(/[?&]view=timeline$/);
  // Opened before anything happened: every entry below arrives through the live feed.
  await expect(entries(page)).toHaveText(["Nothing yet."]);
  const prompted = await trpcMutation(page.request, baseURL!, "session.prompt", { sessionId: teamId, text: "Build a tiny todo app" });
  expect(prompted.status(), await prompted.text()).toBe(200);

  // A second browser watches researcher and implementer side by side, chosen from the roster.
  // (Its own context: a browser keeps six connections to a server, and each tab's live feeds hold some.)
  const split = await (await browser.newContext()).newPage();
  await split.setViewportSize({ width: 1500, height: 950 });
  await split.goto(`/teams/${teamId}`);
  const roster = split.getByRole("region", { name: "Roster" });
  await roster.getByRole("checkbox", { name: "Show researcher in the split view" }).click({ timeout: 30_000 });
  await expect(split).toHaveURL(/[?&]view=split&members=researcher$/);
  await roster.getByRole("checkbox", { name: "Show implementer in the split view" }).click();
  await expect(split).toHaveURL(/[?&]view=split&members=researcher,implementer$/);
  await expect(split.getByRole("navigation", { name: "Room view" }).getByRole("link", { name: "Split" })).toHaveAttribute("aria-current", "page");
  const [researcher, implementer] = [column(split, "researcher"), column(split, "implementer")];
  await expect(researcher.getByRole("region", { name: "Transcript" })).toBeVisible();
  await expect(implementer.getByRole("region", { name: "Transcript" })).toBeVisible();
  const [r, i] = [await researcher.boundingBox(), await implementer.boundingBox()];
  expect(Math.abs(r!.y - i!.y)).toBeLessThan(2);
  expect(i!.x).toBeGreaterThan(r!.x + r!.width - 1);

  // Both teammates' work appears on the first tab's timeline as it happens.
  await expect(entryLink(page, /^researcher created task-1 Research/)).toBeVisible({ timeout: 60_000 });
  await expect(entryLink(page, /^implementer claimed task-2 Implement/)).toBeVisible({ timeout: 60_000 });
  await expect(entryLink(page, /^lead finished a turn/)).toBeVisible({ timeout: 60_000 });
  await expect(timeline(page).getByRole("listitem").filter({ hasText: "researcher → implementer" })).toContainText("consumed", { timeout: 20_000 });
  const texts = await entries(page).allInnerTexts();
  // In causal order: the claim waited for task-1; the researcher's message entered the
  // implementer's running turn (between its start and its end).
  expect(position(texts, /researcher completed task-1/)).toBeLessThan(position(texts, /implementer claimed task-2/));
  const implementerStart = position(texts, /implementer started a turn/);
  const message = position(texts, /researcher → implementer/);
  expect(implementerStart).toBeGreaterThanOrEqual(0);
  expect(implementerStart).toBeLessThan(message);
  expect(message).toBeLessThan(position(texts, /implementer finished a turn/));
  expect(position(texts, /implementer → lead/)).toBeLessThan(position(texts, /lead finished a turn/));
  // The files they wrote are entries too, linking to the version in the Files view.
  await expect(entryLink(page, /^researcher created docs\/research\/notes\.md \(version 1\)/)).toHaveAttribute(
    "href",
    `/teams/${teamId}?view=files&path=docs%2Fresearch%2Fnotes.md&version=1`,
  );
  expect(position(texts, /researcher claimed task-1/)).toBeLessThan(position(texts, /researcher created docs\/research\/notes\.md/));
  expect(position(texts, /implementer created src\/result\.md/)).toBeLessThan(position(texts, /implementer changed src\/result\.md \(version 2\)/));
  await page.screenshot({ path: testInfo.outputPath("timeline-wide.png") });

  // Meanwhile the split view followed both transcripts live.
  await expect(researcher.getByRole("article", { name: "Reply" }).filter({ hasText: "telling the implementer" })).toBeVisible();
  await expect(implementer.getByRole("article", { name: "Team message from researcher" })).toBeVisible();
  await split.screenshot({ path: testInfo.outputPath("split-view.png") });

  // Filter by a member, then also by a kind: exactly the researcher's three task changes.
  await timeline(page).getByRole("group", { name: "Filter by member" }).getByRole("button", { name: "researcher" }).click();
  await expect
    .poll(async () => {
      const shown = await entries(page).allInnerTexts();
      return shown.length > 3 && shown.every((t) => t.includes("researcher"));
    })
    .toBe(true);
  await expect(entryLink(page, /^implementer claimed/)).toHaveCount(0);
  await timeline(page).getByRole("group", { name: "Filter by kind" }).getByRole("button", { name: "Tasks" }).click();
  await expect(entries(page)).toHaveCount(3);
  await expect(entries(page).nth(0)).toContainText("researcher created task-1");
  await expect(entries(page).nth(1)).toContainText("researcher claimed task-1");
  await expect(entries(page).nth(2)).toContainText("researcher completed task-1");
  await timeline(page).getByRole("button", { name: "researcher", pressed: true }).click();
  await expect(entryLink(page, /^implementer claimed task-2/)).toBeVisible();

  // An entry's link opens the member's transcript at that moment.
  await entryLink(page, /^implementer claimed task-2/).click();
  await expect(page).toHaveURL(/[?&]member=implementer&seq=\d+$/);
  await expect(agent(page, "implementer")).toBeVisible();
  const moment = transcript(page).getByRole("group", { name: "Linked moment" });
  await expect(moment).toContainText("Tool result: team_task_update");
  await expect(moment).toBeInViewport();
  await page.screenshot({ path: testInfo.outputPath("timeline-moment.png") });
  // Back on the timeline, its filters are as they were left (they live in the page, not the view).
  await roomView(page, "Timeline");
  await timeline(page).getByRole("button", { name: "Tasks", pressed: true }).click();

  // Both split columns keep updating: prompts to each teammate appear in them.
  for (const name of ["researcher", "implementer"]) {
    await page.getByRole("region", { name: "Roster" }).getByRole("button", { name: new RegExp(`^${name} \\(teammate\\)`) }).click();
    await expect(agent(page, name)).toBeVisible();
    await send(page, `Any news, ${name}?`);
    await expect(transcript(page).getByRole("article", { name: /^Prompt from/ }).filter({ hasText: `Any news, ${name}?` })).toBeVisible();
  }
  await roomView(page, "Timeline");
  for (const name of ["researcher", "implementer"]) {
    await expect(entryLink(page, new RegExp(`prompted ${name}: Any news, ${name}\\?`))).toBeVisible({ timeout: 20_000 });
  }
  await expect(researcher.getByRole("article", { name: /^Prompt from/ }).filter({ hasText: "Any news, researcher?" })).toBeVisible({ timeout: 20_000 });
  await expect(implementer.getByRole("article", { name: /^Prompt from/ }).filter({ hasText: "Any news, implementer?" })).toBeVisible({ timeout: 20_000 });

  // Removing one from the split keeps the other; a narrower window keeps the timeline as the centre.
  await researcher.getByRole("link", { name: "Remove researcher from the split view" }).click();
  await expect(split).toHaveURL(/[?&]view=split&members=implementer$/);
  await expect(column(split, "researcher")).toHaveCount(0);
  await page.setViewportSize({ width: 1100, height: 900 });
  await expect(timeline(page)).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath("timeline-narrow.png") });

  // A file entry opens that version in the Files view (an older one: the result is at v2).
  await entryLink(page, /^implementer created src\/result\.md \(version 1\)/).click();
  await expect(page).toHaveURL(/[?&]view=files&path=src%2Fresult\.md&version=1$/);
  const viewer = page.getByRole("region", { name: "File viewer" });
  await expect(viewer.getByRole("heading", { name: "src/result.md" })).toBeVisible();
  await expect(viewer).toContainText("v1 ·");
  await expect(viewer).toContainText("An older version: the latest is v2.");
});
