import { expect, type Page } from "@playwright/test";
import type { AgentStatusName } from "../components/room/agent-status";

// Shared steps of the end-to-end tests: selectors by role and accessible name only.

export async function createTeam(page: Page, title: string, home = "/"): Promise<string> {
  await page.goto(home);
  await page.getByLabel("Title").fill(title);
  await page.getByRole("button", { name: "Create team" }).click();
  await expect(page).toHaveURL(/\/teams\/ses_/);
  await expect(page.getByRole("heading", { name: title, level: 1 })).toBeVisible();
  return page.url().split("/teams/")[1]!.split("?")[0]!;
}

export async function send(page: Page, text: string) {
  const box = page.getByRole("textbox", { name: "Prompt" });
  await box.fill(text);
  await box.press("Enter");
}

export const transcript = (page: Page) => page.getByRole("region", { name: "Transcript" });
export const agent = (page: Page, name = "lead") => page.getByRole("region", { name: `Agent ${name}` });
/** The agent panel's status, in the room's vocabulary (components/room/agent-status.ts). */
export const agentStatus = (page: Page, status: AgentStatusName, name = "lead") =>
  agent(page, name).locator(".panel-head").getByLabel(`status: ${status}`);
export const finalAnswer = (page: Page) =>
  transcript(page).getByRole("article", { name: "Reply" }).getByText(/^Final answer for/);

/** Shows a view of the room's centre (Agent, Timeline, Split, Files). */
export async function roomView(page: Page, name: "Agent" | "Timeline" | "Split" | "Files"): Promise<void> {
  await page.getByRole("navigation", { name: "Room view" }).getByRole("link", { name, exact: true }).click();
}

/** On a phone: shows one part of the room (components/room/room-switcher.tsx). */
export async function roomSection(page: Page, name: "Agents" | "Transcript" | "Tasks" | "Files" | "People"): Promise<void> {
  await page.getByRole("navigation", { name: "Room sections" }).getByRole("button", { name, exact: true }).click();
}

/** Shows a tab of the room's team panel (Tasks, Mailbox, Files, Memory, Routines, Activity, Tools). */
export async function panelTab(page: Page, name: "Tasks" | "Mailbox" | "Files" | "Memory" | "Routines" | "Activity" | "Tools"): Promise<void> {
  await page.getByRole("tablist", { name: "Team panel" }).getByRole("tab", { name: new RegExp(`^${name}`) }).click();
}
