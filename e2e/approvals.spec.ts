import { expect, test } from "@playwright/test";
import { axeViolations } from "./axe";
import { agentStatus, createTeam, panelTab, send, transcript } from "./helpers";

// People in control, end to end with the keyless model: an owner sets a tool to "Ask first";
// the Lead's call waits (its status says so) and shows, live, in a second browser too; the
// approval runs it once. A question (`ask_humans`) is answered from the second browser, and the
// Lead reads the answer with the person's name.

test("a call waits for approval and runs once approved; a question is answered from another browser", async ({ browser, page }, testInfo) => {
  test.setTimeout(120_000);
  const teamId = await createTeam(page, "Approvals team");
  await panelTab(page, "Tools");
  await page.getByRole("combobox", { name: "Mode of workspace_write" }).selectOption("ask");
  await expect(page.getByRole("combobox", { name: "Mode of workspace_write" })).toHaveValue("ask");

  const other = await (await browser.newContext()).newPage();
  await other.goto(`/teams/${teamId}`);
  await expect(other.getByRole("heading", { name: "Approvals team", level: 1 })).toBeVisible();

  await send(page, '/tool workspace_write {"path":"notes/plan.md","content":"The plan","expected_version":0}');
  const waiting = (p: typeof page) => p.getByRole("region", { name: /Waiting for people/ });
  const request = waiting(page).getByRole("listitem", { name: "lead asks to run workspace_write" });
  await expect(request).toBeVisible({ timeout: 20_000 });
  await expect(request).toContainText('path: "notes/plan.md"');
  await expect(agentStatus(page, "Waiting for approval")).toBeVisible();
  await expect(waiting(other).getByRole("listitem", { name: "lead asks to run workspace_write" })).toBeVisible();
  const violations = await axeViolations(page);
  expect(violations.map((v) => v.id)).toEqual([]);
  await page.screenshot({ path: testInfo.outputPath("waiting-approval.png") });

  await request.getByRole("button", { name: "Approve" }).click();
  await expect(waiting(page)).toHaveCount(0);
  await expect(waiting(other)).toHaveCount(0);
  await expect(transcript(page).getByText(/Tool result: workspace_write/)).toHaveCount(1, { timeout: 20_000 });
  await expect(page.getByRole("tablist", { name: "Team panel" }).getByRole("tab", { name: /^Files \(1\)/ })).toBeVisible();
  await expect(agentStatus(page, "Idle")).toBeVisible({ timeout: 20_000 });

  // A question, answered from the other browser by one of the offered answers.
  await send(page, '/tool ask_humans {"question":"Red or blue?","choices":["red","blue"]}');
  const question = waiting(other).getByRole("listitem", { name: "Question from lead" });
  await expect(question).toContainText("Red or blue?", { timeout: 20_000 });
  await expect(agentStatus(page, "Waiting for an answer")).toBeVisible();
  await question.getByRole("group", { name: "Answers offered by lead" }).getByRole("button", { name: "blue" }).click();
  await expect(waiting(page)).toHaveCount(0);
  await expect(transcript(page).getByText(/Tool result: ask_humans · by: "Olive Owner", answer: "blue"/)).toBeVisible({ timeout: 20_000 });
  await other.context().close();
});
