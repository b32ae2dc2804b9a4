import { expect, test, type Locator, type Page } from "@playwright/test";
import { axeViolations } from "./axe";
import { anonymousContext, OWNER } from "./accounts";
import { agentStatus, createTeam, finalAnswer, panelTab, roomSection, send } from "./helpers";

// axe-core on every page and state of the product, at a desktop width and a phone's: the home
// page, the account page, a room while its team works and once it has finished, the Files view,
// the split view, and the confirmation dialogs, each in the light theme and again in the dark one
// (it follows the system's setting, CSS only). Zero violations of WCAG 2.2 A and AA, not a
// baseline. Nothing on any of them scrolls sideways.

const WIDTHS = [
  { name: "desktop", width: 1440, height: 900 },
  { name: "phone", width: 390, height: 844 },
] as const;

async function expectAccessible(page: Page, what: string): Promise<void> {
  for (const colorScheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme });
    const violations = await axeViolations(page, { coloursOnly: colorScheme === "dark" });
    const found = violations.map((v) => `${v.id} (${v.nodes.length}): ${v.nodes.slice(0, 12).map((n) => n.target.join(" ")).join(" | ")}`);
    expect(found, `${what}, ${colorScheme} theme`).toEqual([]);
  }
  await page.emulateMedia({ colorScheme: "light" });
  const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(sideways, `${what}: scrolls sideways`).toBeLessThanOrEqual(0);
}

for (const size of WIDTHS) {
  test(`every page and dialog passes axe-core at ${size.width} px (${size.name})`, async ({ page }, testInfo) => {
    test.setTimeout(300_000);
    const phone = size.width < 768;
    await page.setViewportSize({ width: size.width, height: size.height });

    await page.goto("/");
    await expect(page.getByRole("heading", { name: "Your teams" })).toBeVisible();
    await expectAccessible(page, "home");

    await page.goto("/account");
    await expect(page.getByRole("heading", { name: "Your account" })).toBeVisible();
    await expectAccessible(page, "account");

    await page.goto("/audit");
    await expect(page.getByRole("table")).toBeVisible();
    await expectAccessible(page, "audit log");

    const teamId = await createTeam(page, `Accessible team ${size.name}`);
    // Writes ask first, so the team holds at its first write (waiting for approval, still
    // stoppable) however fast it runs, until this test lets it go on.
    if (phone) await roomSection(page, "Tasks");
    await panelTab(page, "Tools");
    await page.getByRole("combobox", { name: "Mode of workspace_write" }).selectOption("ask");
    await expect(page.getByRole("combobox", { name: "Mode of workspace_write" })).toHaveValue("ask");
    if (phone) await roomSection(page, "Transcript");
    await send(page, "Build a tiny todo app");
    await expect(agentStatus(page, "Working")).toBeVisible();
    await expectAccessible(page, "room while the team works");
    if (phone) await roomSection(page, "Agents");
    await expect(page.getByRole("region", { name: "Roster" }).getByRole("button", { name: /^researcher \(teammate\)/ })).toBeVisible({ timeout: 30_000 });
    await expectAccessible(page, "the agents while the team works");
    if (phone) await roomSection(page, "Transcript");
    const writes = page.getByRole("region", { name: /Waiting for people/ }).getByRole("listitem", { name: /asks to run workspace_write$/ });
    await expect(writes.first()).toBeVisible({ timeout: 30_000 });
    await expectAccessible(page, "a call waiting for approval");

    await page.getByRole("button", { name: "Stop the team" }).click();
    await expect(page.getByRole("alertdialog", { name: "Stop the whole team?" })).toBeVisible();
    await expectAccessible(page, "stop-the-team dialog");
    await page.keyboard.press("Escape");

    // Writes run from now on; one asked before that is approved as it shows.
    await writes.first().getByRole("button", { name: "Always allow workspace_write" }).click();
    await expect(async () => {
      if ((await writes.count()) > 0) await writes.first().getByRole("button", { name: "Approve" }).click();
      await expect(finalAnswer(page)).toBeVisible({ timeout: 2_000 });
    }).toPass({ timeout: 90_000 });
    await expect(agentStatus(page, "Idle")).toBeVisible({ timeout: 20_000 });
    await expectAccessible(page, "finished room");
    await page.getByRole("region", { name: "Transcript" }).getByRole("button", { name: "Message actions" }).last().click();
    await expect(page.getByRole("menuitem", { name: "Copy text" })).toBeVisible();
    await expectAccessible(page, "a message's menu");
    await page.keyboard.press("Escape");
    await page.screenshot({ path: testInfo.outputPath("finished-room.png") });

    if (phone) await roomSection(page, "Tasks");
    for (const tab of ["Mailbox", "Files", "Memory", "Routines", "Activity", "Tasks"] as const) {
      await panelTab(page, tab);
      await expectAccessible(page, `finished room, ${tab} tab`);
    }

    if (phone) await roomSection(page, "People");
    await page.getByRole("region", { name: "People" }).getByRole("button", { name: "Leave team" }).click();
    await expect(page.getByRole("alertdialog", { name: "Leave this team?" })).toBeVisible();
    await expectAccessible(page, "leave dialog");
    await page.keyboard.press("Escape");
    if (phone) await expectAccessible(page, "the people screen");

    if (!phone) {
      // The sidebar and the panel collapse and the panel widens; the room stays accessible in each shape.
      await page.getByRole("button", { name: "Sidebar", expanded: true }).click();
      await page.getByRole("button", { name: "Panel", expanded: true }).click();
      await expect(page.getByRole("region", { name: "Roster" })).toHaveCount(0);
      await expectAccessible(page, "sidebar and panel collapsed");
      await page.getByRole("button", { name: "Sidebar", expanded: false }).click();
      await page.getByRole("button", { name: "Panel", expanded: false }).click();
      await page.getByRole("button", { name: "Wider panel", pressed: false }).click();
      await expectAccessible(page, "wider panel");
      await page.getByRole("button", { name: "Wider panel", pressed: true }).click();
    }

    // The team's end told the owner: from here on the top bar shows an unread count, and its
    // link's name still holds its visible text (WCAG 2.5.3).
    const unread = page.getByRole("navigation", { name: "Account" }).getByRole("link", { name: /^Notifications \d+\+? unread$/ });
    await page.goto("/");
    await expect(unread).toBeVisible({ timeout: 15_000 });
    await expectAccessible(page, "home with unread notifications");

    await page.goto(`/teams/${teamId}?view=timeline`);
    await expect(page.getByRole("list", { name: "Timeline entries" })).toBeVisible({ timeout: 15_000 });
    await expect(unread).toBeVisible();
    await expectAccessible(page, "timeline");

    await page.goto(`/teams/${teamId}?view=split&members=researcher,implementer`);
    await expect(page.getByRole("group", { name: "Split view" })).toBeVisible({ timeout: 15_000 });
    await expectAccessible(page, "split view");

    await page.goto(`/teams/${teamId}?view=files`);
    await expect(page.getByRole("region", { name: "Files" }).first()).toBeVisible({ timeout: 15_000 });
    await expect(unread).toBeVisible();
    await expectAccessible(page, "files view");

    if (!phone) {
      // Between 768 and 1279 px the sidebar is a drawer.
      await page.setViewportSize({ width: 1100, height: size.height });
      await page.getByRole("button", { name: "Agents and people" }).click();
      const drawer = page.getByRole("dialog", { name: "Agents and people" });
      await expect(drawer.getByRole("region", { name: "Roster" })).toBeVisible();
      await expectAccessible(page, "the sidebar's drawer at 1100 px");
      await drawer.getByRole("button", { name: /^researcher \(teammate\)/ }).click();
      await expect(drawer).toHaveCount(0);
      await expect(page).toHaveURL(/[?&]member=researcher$/);
    }
  });
}

/** Presses Tab until `target` has focus: the keyboard reaches it in at most `max` presses. */
async function tabTo(page: Page, target: Locator, max: number): Promise<number> {
  for (let presses = 1; presses <= max; presses++) {
    await page.keyboard.press("Tab");
    if (await target.evaluate((el) => el === document.activeElement)) return presses;
  }
  throw new Error(`not reached in ${max} Tab presses`);
}

test("by keyboard alone: sign in, open a team, skip to the prompt, prompt, switch agents, confirm a stop, open a task", async ({ browser, baseURL }) => {
  test.setTimeout(120_000);
  const context = await anonymousContext(browser, baseURL!);
  const page = await context.newPage();
  await page.goto("/sign-in");
  await tabTo(page, page.getByLabel("Email"), 10);
  await page.keyboard.type(OWNER.email);
  await page.keyboard.press("Tab");
  await page.keyboard.type(OWNER.password);
  await page.keyboard.press("Enter");
  await expect(page.getByRole("heading", { name: "Your teams" })).toBeVisible();

  await tabTo(page, page.getByLabel("Title"), 15);
  await page.keyboard.type("Keyboard team");
  await page.keyboard.press("Enter");
  await expect(page.getByRole("heading", { name: "Keyboard team", level: 1 })).toBeVisible();

  // The skip links are the first stops of a fresh room load, before the top bar: the prompt
  // box is two Tab presses and Enter away.
  await page.goto(page.url());
  await expect(page.getByRole("link", { name: "Skip to the prompt box" })).toBeAttached();
  expect(await tabTo(page, page.getByRole("link", { name: "Skip to the prompt box" }), 5)).toBe(2);
  await page.keyboard.press("Enter");
  const prompt = page.getByRole("textbox", { name: "Prompt" });
  await expect(prompt).toBeFocused();
  await page.keyboard.type("Build a tiny todo app");
  await page.keyboard.press("Enter");

  const roster = page.getByRole("region", { name: "Roster" });
  await expect(roster.getByRole("button", { name: /^researcher \(teammate\)/ })).toBeVisible({ timeout: 30_000 });
  // Out of the text field, `j` selects the next agent.
  await page.keyboard.press("Tab");
  await page.keyboard.press("j");
  await expect(page.getByRole("region", { name: "Agent researcher" })).toBeVisible();

  // A confirmation, by keyboard, from the top of the room (opened again): the header's Stop the
  // team, Cancel has focus, Tab to the action, Enter.
  await expect(page.getByRole("listitem", { name: /^task-1 / })).toBeVisible({ timeout: 30_000 });
  await page.goto(page.url());
  await expect(page.getByRole("button", { name: "Stop the team" })).toBeEnabled();
  await tabTo(page, page.getByRole("button", { name: "Stop the team" }), 15);
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("alertdialog", { name: "Stop the whole team?" });
  await expect(dialog.getByRole("button", { name: "Cancel" })).toBeFocused();
  await page.keyboard.press("Tab");
  await expect(dialog.getByRole("button", { name: "Stop the team" })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(dialog).toHaveCount(0);
  await expect(roster.getByRole("button", { name: /^lead \(lead\)/ })).toContainText("Stopped", { timeout: 20_000 });

  // The palette opens a task by name.
  await page.keyboard.press("Control+k");
  const palette = page.getByRole("dialog", { name: "Command palette" });
  await expect(palette).toBeVisible();
  await expectAccessible(page, "command palette");
  await page.keyboard.type("task-1");
  await page.keyboard.press("Enter");
  await expect(palette).toHaveCount(0);
  await expect(page.getByRole("listitem", { name: /^task-1 / })).toBeFocused();

  // `?` lists the shortcuts.
  await page.keyboard.press("?");
  const help = page.getByRole("dialog", { name: "Keyboard shortcuts" });
  await expect(help).toContainText("Next agent");
  await expectAccessible(page, "shortcuts dialog");
  await page.keyboard.press("Escape");
  await expect(help).toHaveCount(0);

  await context.close();
});
