import { expect, test, type Page } from "@playwright/test";
import { trpcMutation } from "./accounts";
import { createTeam, panelTab, roomSection, send, transcript } from "./helpers";

// Long unbroken text (a 200-character title, ids, task subjects, write scopes, team messages,
// a model's label) wraps: nothing scrolls sideways, on the home page or in the room, wide or narrow.

/** Elements wider than their box that would scroll or spill sideways (code blocks may scroll). */
async function sidewaysOverflow(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth + 1) {
      const wide = Array.from(document.querySelectorAll<HTMLElement>("body *")).filter((c) => c.getBoundingClientRect().right > root.clientWidth + 1).at(-1);
      out.push(`page: ${root.scrollWidth} > ${root.clientWidth}${wide ? ` (${wide.tagName.toLowerCase()}.${wide.className} "${(wide.textContent ?? "").slice(0, 20)}")` : ""}`);
    }
    for (const el of Array.from(document.querySelectorAll<HTMLElement>("body *"))) {
      if (el.closest("pre") || el.classList.contains("sr-only")) continue;
      const style = getComputedStyle(el);
      const clips = style.overflowX !== "visible";
      if (clips && el.scrollWidth > el.clientWidth + 1) {
        const right = el.getBoundingClientRect().right;
        const culprit = Array.from(el.querySelectorAll<HTMLElement>("*")).filter((c) => c.getBoundingClientRect().right > right + 1).at(-1);
        const what = culprit ? ` (${culprit.tagName.toLowerCase()}.${culprit.className} "${(culprit.textContent ?? "").slice(0, 20)}")` : "";
        out.push(`${el.tagName.toLowerCase()}.${el.className}: ${el.scrollWidth} > ${el.clientWidth}${what}`);
      }
    }
    return out;
  });
}

test("long unbroken text wraps at 1440 and 390 px, on the home page and in the room", async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const title = "T".repeat(200);
  await createTeam(page, title);
  const room = page.url();
  const name = "n".repeat(64);
  await send(page, `/tool team_task_create {"subject":"${"S".repeat(200)}","description":"${"d".repeat(400)}","write_scopes":["${"p".repeat(300)}/x"]}`);
  await send(page, `/tool spawn_teammate {"name":"${name}","description":"${"e".repeat(400)}","prompt":"${"Q".repeat(600)}"}`);
  // A teammate on a model with a long id and label (scripts/e2e-server.ts; never reached).
  const model = `openai-compatible:e2e-${"long-model-id-".repeat(8)}end`;
  await send(page, `/tool spawn_teammate {"name":"modelled","description":"d","prompt":"hello","model":"${model}"}`);
  await expect(page.getByRole("region", { name: "Roster" }).getByRole("button", { name: new RegExp(`^${name} \\(teammate\\)`) })).toBeVisible({
    timeout: 30_000,
  });
  await panelTab(page, "Mailbox");
  await expect(page.getByRole("region", { name: "Mailbox" }).getByRole("listitem", { name: new RegExp(`from ${name} to lead`) })).toBeVisible({
    timeout: 30_000,
  });
  await panelTab(page, "Tasks");
  await expect(page.getByRole("listitem", { name: new RegExp(`^task-1 S{200}`) })).toBeVisible();
  await expect(transcript(page).getByText(/The spawn_teammate tool returned/).first()).toBeVisible({ timeout: 30_000 });

  for (const width of [1440, 390]) {
    const phone = width < 768;
    await page.setViewportSize({ width, height: 900 });
    await page.goto(room);
    await expect(page.getByRole("heading", { name: title, level: 1 })).toBeVisible();
    await expect(transcript(page).getByText(/The spawn_teammate tool returned/).first()).toBeVisible();
    expect(await sidewaysOverflow(page), `room at ${width} px`).toEqual([]);
    if (phone) await roomSection(page, "Tasks");
    await expect(page.getByRole("listitem", { name: new RegExp(`^task-1 S{200}`) })).toBeVisible();
    await page.screenshot({ path: testInfo.outputPath(`long-text-room-${width}.png`), fullPage: true });
    expect(await sidewaysOverflow(page), `board at ${width} px`).toEqual([]);
    await panelTab(page, "Mailbox");
    expect(await sidewaysOverflow(page), `mailbox at ${width} px`).toEqual([]);

    if (phone) await roomSection(page, "Agents");
    await page.getByRole("region", { name: "Roster" }).getByRole("button", { name: new RegExp(`^${name} \\(teammate\\)`) }).click();
    await expect(transcript(page).getByText(/^Q{600}$/)).toBeVisible();
    expect(await sidewaysOverflow(page), `teammate at ${width} px`).toEqual([]);
    if (phone) await roomSection(page, "Agents");
    await page.getByRole("region", { name: "Roster" }).getByRole("button", { name: /^modelled \(teammate\)/ }).click();
    await expect(page.getByRole("region", { name: "Agent modelled" })).toContainText(`A model label long enough to wrap ${"L".repeat(60)}`);
    expect(await sidewaysOverflow(page), `a long model label at ${width} px`).toEqual([]);
    if (phone) {
      await roomSection(page, "People");
      expect(await sidewaysOverflow(page), `people at ${width} px`).toEqual([]);
    }

    await page.goto("/");
    await expect(page.getByRole("link", { name: title })).toBeVisible();
    expect(await sidewaysOverflow(page), `home at ${width} px`).toEqual([]);
  }
});

test("long paths and lines wrap in the Files view at 1440 and 390 px", async ({ page, baseURL }, testInfo) => {
  const teamId = await createTeam(page, "Long paths");
  const path = `${"d".repeat(200)}/${"f".repeat(300)}.md`;
  const long = `# ${"H".repeat(300)}\n\n${"w".repeat(500)}\n`;
  for (const [content, expectedVersion] of [[long, 0], [`${long}${"x".repeat(400)}\n`, 1]] as const) {
    const res = await trpcMutation(page.request, baseURL!, "workspace.write", { teamId, path, content, expectedVersion });
    expect(res.status(), await res.text()).toBe(200);
  }
  for (const width of [1440, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`/teams/${teamId}?view=files&path=${encodeURIComponent(path)}`);
    const history = page.getByRole("region", { name: "History" });
    await history.getByRole("checkbox", { name: "Compare v1" }).check();
    await history.getByRole("checkbox", { name: "Compare v2" }).check();
    await expect(page.getByRole("table", { name: "Changes from v1 to v2" })).toContainText("x".repeat(400));
    await page.screenshot({ path: testInfo.outputPath(`long-paths-files-${width}.png`), fullPage: true });
    expect(await sidewaysOverflow(page), `files at ${width} px`).toEqual([]);
  }
});
