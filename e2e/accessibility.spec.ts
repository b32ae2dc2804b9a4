import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";
import { agentStatus, createTeam, finalAnswer, send } from "./helpers";

// axe-core on every page and state of the product, at a desktop width and a phone's: the home
// page, the account page, a room while its team works and once it has finished, the Files view,
// the split view, and the confirmation dialogs, in the light theme and the dark one. Zero violations of WCAG 2.2 A and AA, not a
// baseline. Nothing on any of them scrolls sideways.

const WIDTHS = [
  { name: "desktop", width: 1440, height: 900, dark: false },
  { name: "phone", width: 390, height: 844, dark: false },
  // The dark theme follows the system's setting: its colours must keep their contrast too.
  { name: "desktop, dark theme", width: 1440, height: 900, dark: true },
] as const;

async function expectAccessible(page: Page, what: string): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]).analyze();
  const found = violations.map((v) => `${v.id} (${v.nodes.length}): ${v.nodes.slice(0, 12).map((n) => n.target.join(" ")).join(" | ")}`);
  expect(found, what).toEqual([]);
  const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(sideways, `${what}: scrolls sideways`).toBeLessThanOrEqual(0);
}

for (const size of WIDTHS) {
  test(`every page and dialog passes axe-core at ${size.width} px (${size.name})`, async ({ page }, testInfo) => {
    test.setTimeout(150_000);
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.emulateMedia({ colorScheme: size.dark ? "dark" : "light" });

    await page.goto("/");
    await expect(page.getByRole("heading", { name: "Your teams" })).toBeVisible();
    await expectAccessible(page, "home");

    await page.goto("/account");
    await expect(page.getByRole("heading", { name: "Your account" })).toBeVisible();
    await expectAccessible(page, "account");

    const teamId = await createTeam(page, `Accessible team ${size.name}`);
    await send(page, "Build a tiny todo app");
    await expect(page.getByRole("region", { name: "Roster" }).getByRole("button", { name: /^researcher \(teammate\)/ })).toBeVisible({ timeout: 30_000 });
    await expect(agentStatus(page, "Working")).toBeVisible();
    await expectAccessible(page, "room while the team works");

    await page.getByRole("button", { name: "Stop the team" }).click();
    await expect(page.getByRole("alertdialog", { name: "Stop the whole team?" })).toBeVisible();
    await expectAccessible(page, "stop-the-team dialog");
    await page.keyboard.press("Escape");

    await expect(finalAnswer(page)).toBeVisible({ timeout: 90_000 });
    await expect(agentStatus(page, "Idle")).toBeVisible({ timeout: 20_000 });
    await expectAccessible(page, "finished room");
    await page.screenshot({ path: testInfo.outputPath("finished-room.png") });

    await page.getByRole("region", { name: "People" }).getByRole("button", { name: "Leave team" }).click();
    await expect(page.getByRole("alertdialog", { name: "Leave this team?" })).toBeVisible();
    await expectAccessible(page, "leave dialog");
    await page.keyboard.press("Escape");

    await page.goto(`/teams/${teamId}?view=split&members=researcher,implementer`);
    await expect(page.getByRole("group", { name: "Split view" })).toBeVisible({ timeout: 15_000 });
    await expectAccessible(page, "split view");

    await page.goto(`/teams/${teamId}?view=files`);
    await expect(page.getByRole("region", { name: "Files" }).first()).toBeVisible({ timeout: 15_000 });
    await expectAccessible(page, "files view");
  });
}
