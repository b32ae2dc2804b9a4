import { expect, test, type Page } from "@playwright/test";
import { axeViolations } from "./axe";
import { createTeam, send, transcript } from "./helpers";

// Notifications, end to end with the keyless model: a question an agent asks reaches the
// person's inbox (the top bar's unread count, live) and, with the tab hidden and browser
// notifications turned on, the browser's own notification; it is answered from the inbox, the
// Lead's answer arrives there too, and everything can be marked read.

const axe = async (page: Page) =>
  (await axeViolations(page)).map((v) => v.id);

test("a question reaches the inbox and a hidden tab's browser notification, and is answered from the inbox", async ({ page, context }) => {
  test.setTimeout(120_000);
  // The owner's inbox holds what earlier tests' teams told them: start from nothing unread.
  await page.goto("/notifications");
  await expect(page.getByRole("heading", { name: "Notifications", level: 1 })).toBeVisible();
  const markAll = page.getByRole("button", { name: "Mark all read" });
  await expect(page.getByRole("status").filter({ hasText: /unread|Nothing unread/ })).toBeVisible();
  if (await markAll.isEnabled()) await markAll.click();
  await expect(page.getByRole("status").filter({ hasText: "Nothing unread." })).toBeVisible();
  await createTeam(page, "Inbox team");
  const bell = page.getByRole("navigation", { name: "Account" }).getByRole("link", { name: /^Notifications/ });
  await expect(bell).toHaveAccessibleName("Notifications");

  // A second tab on the inbox, hidden, whose browser notifications are recorded.
  await context.grantPermissions(["notifications"]);
  const inbox = await context.newPage();
  await inbox.addInitScript(() => {
    const shown: { title: string; body: string }[] = [];
    (window as unknown as { shownNotifications: typeof shown }).shownNotifications = shown;
    class RecordedNotification {
      static permission = "granted";
      static requestPermission = () => Promise.resolve("granted");
      onclick: (() => void) | null = null;
      constructor(title: string, opts: { body?: string } = {}) {
        shown.push({ title, body: opts.body ?? "" });
      }
    }
    Object.defineProperty(window, "Notification", { value: RecordedNotification });
    Object.defineProperty(document, "visibilityState", { get: () => "hidden" });
  });
  await inbox.goto("/notifications");
  await expect(inbox.getByRole("heading", { name: "Notifications", level: 1 })).toBeVisible();
  await inbox.getByRole("button", { name: "Turn on browser notifications" }).click();
  await expect(inbox.getByRole("button", { name: "Turn off browser notifications" })).toBeVisible();

  await send(page, '/tool ask_humans {"question":"Ship on Friday?","choices":["yes","no"]}');
  await expect(bell).toHaveAccessibleName("Notifications 1 unread", { timeout: 20_000 });
  const item = inbox.getByRole("listitem", { name: "Unread: lead asks: Ship on Friday?" });
  await expect(item).toBeVisible();
  await expect.poll(() => inbox.evaluate(() => (window as unknown as { shownNotifications: { title: string }[] }).shownNotifications.map((n) => n.title))).toEqual([
    "lead asks: Ship on Friday?",
  ]);
  for (const width of [1440, 390]) {
    await inbox.setViewportSize({ width, height: 900 });
    expect(await axe(inbox)).toEqual([]);
  }

  // Answered from the inbox: the Lead goes on, and its answer arrives here too.
  await item.getByRole("button", { name: "yes" }).click();
  await expect(item.getByRole("button", { name: "yes" })).toHaveCount(0, { timeout: 20_000 });
  await expect(inbox.getByRole("listitem", { name: "Unread: Inbox team: the Lead answered" })).toBeVisible({ timeout: 20_000 });
  await expect(bell).toHaveAccessibleName("Notifications 2 unread");
  await expect(transcript(page).getByText(/Tool result: ask_humans/)).toHaveCount(1);

  await inbox.getByRole("button", { name: "Mark all read" }).click();
  await expect(inbox.getByRole("status").filter({ hasText: "Nothing unread." })).toBeVisible();
  await expect(page.getByRole("navigation", { name: "Account" }).getByRole("link", { name: /^Notifications/ })).toHaveAccessibleName("Notifications");

  // Muting a kind is kept.
  // Reloaded once the setting is saved (a reload first would cancel the save).
  const saved = inbox.waitForResponse((r) => r.url().includes("notifications.setSettings") && r.ok());
  await inbox.getByRole("checkbox", { name: "Mentions of you" }).uncheck();
  await saved;
  await inbox.reload();
  await expect(inbox.getByRole("checkbox", { name: "Mentions of you" })).not.toBeChecked();
  await expect(inbox.getByRole("checkbox", { name: "The Lead answered" })).toBeChecked();
});
