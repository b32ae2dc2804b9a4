import { expect, test } from "@playwright/test";
import { agent, agentStatus, createTeam, send, transcript } from "./helpers";

// Models and cost end to end (SPEC.md §15). The e2e server (scripts/e2e-server.ts) prices the
// keyless model at $1 / $5 per million tokens and offers a second model that is never reached.

const SPEND = /[1-9][\d,]* tokens · \$0\.\d+/;

test("per-agent and team cost show live in the room and on home; a teammate gets the model picked for it", async ({ page }, testInfo) => {
  await page.goto("/");
  const model = page.getByRole("combobox", { name: "Model" });
  await expect(model.getByRole("option")).toHaveText([
    "Keyless demo — $1 in, $5 out per million tokens",
    "Unreachable second model — $0.5 in, $2 out per million tokens",
    `A model label long enough to wrap ${"L".repeat(60)} — no price set, counted as $0`,
  ]);
  await createTeam(page, "Costs team");

  const roster = page.getByRole("region", { name: "Roster" });
  const leadButton = roster.getByRole("button", { name: /^lead \(lead\)/ });
  await expect(leadButton).toContainText("Keyless demo");
  await expect(leadButton.locator(".member-spend")).toHaveText("0 tokens · $0");

  // One short turn (a tool call, then a reply): the figures move without a reload.
  await send(page, "/tool list_agents {}");
  await expect(transcript(page).getByRole("article", { name: "Reply" }).first()).toBeVisible({ timeout: 20_000 });
  await expect(agentStatus(page, "Idle")).toBeVisible({ timeout: 20_000 });
  await expect(leadButton).toContainText(SPEND);
  await expect(agent(page).locator(".panel-head")).toContainText(/[1-9][\d,]* in · [1-9][\d,]* out · \$0\.\d+/);
  const leadSpend = (await leadButton.locator(".member-spend").textContent())!;
  // The team's total is the Lead's alone so far.
  await expect(page.getByText(/^team: /)).toHaveText(`team: ${leadSpend}`);

  // A teammate with the other offered model: the roster says which.
  await roster.getByRole("button", { name: "Add a teammate" }).click();
  const form = page.getByRole("form", { name: "Add a teammate" });
  await form.getByLabel("Name (kebab-case)").fill("second");
  await form.getByLabel("Description").fill("Runs on the other model");
  await form.getByLabel("First task").fill("Say hello");
  const picker = form.getByLabel("Model");
  await expect(picker.getByRole("option")).toHaveText([
    "the Lead's (Keyless demo)",
    "Keyless demo — $1 in, $5 out per million tokens",
    "Unreachable second model — $0.5 in, $2 out per million tokens",
    `A model label long enough to wrap ${"L".repeat(60)} — no price set, counted as $0`,
  ]);
  await picker.selectOption({ label: "Unreachable second model — $0.5 in, $2 out per million tokens" });
  await form.getByRole("button", { name: "Add" }).click();
  const second = roster.getByRole("button", { name: /^second \(teammate\)/ });
  await expect(second).toContainText("Unreachable second model");
  // Its provider is never reached, so it spends nothing and the total stays the Lead's.
  await expect(second.locator(".member-spend")).toHaveText("0 tokens · $0");
  await expect(page.getByText(/^team: /)).toHaveText(`team: ${leadSpend}`);
  await page.screenshot({ path: testInfo.outputPath("cost-room.png"), fullPage: true });

  // Home lists the team with its total.
  await page.goto("/");
  const item = page.getByRole("list", { name: "Teams" }).getByRole("listitem").filter({ has: page.getByRole("link", { name: "Costs team" }) });
  await expect(item).toContainText(`spent ${leadSpend}`);
  await page.screenshot({ path: testInfo.outputPath("cost-home.png"), fullPage: true });
});
