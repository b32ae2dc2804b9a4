import { readFile } from "node:fs/promises";
import { expect, test, type Download, type Locator, type Page } from "@playwright/test";
import { unzip } from "../server/testing/zip";
import { anonymousContext, OWNER, signUpOverApi, trpcMutation } from "./accounts";
import { createTeam, finalAnswer, send, transcript } from "./helpers";

// The Files view (docs/SPEC.md §14) end to end: files made, edited and deleted in the browser,
// their history and diffs, downloads, conflicts with changes made elsewhere, and two browsers
// seeing the same workspace live. Changes "made elsewhere" are direct API calls from the same
// person's context (trpcMutation), or another browser.
//
// To extend (the keyless scenario's files, an edit racing an agent's): `openFiles`, `files`,
// `tree`, `viewer`, `history`, `editInBrowser` and `apiWrite` below are the steps.

const files = (page: Page) => page.getByRole("region", { name: "Files" });
const tree = (page: Page) => page.getByRole("navigation", { name: "File tree" });
const viewer = (page: Page) => page.getByRole("region", { name: "File viewer" });
const history = (page: Page) => page.getByRole("region", { name: "History" });
/** What a change did (the skeletons' "Loading …" statuses aside). */
const status = (page: Page) => files(page).getByRole("status").filter({ hasNotText: /^Loading / });
const version = (page: Page, v: number) => history(page).getByRole("listitem", { name: `v${v}`, exact: true });

/** Switches the room's centre column to the Files view. */
async function openFiles(page: Page) {
  await page.getByRole("navigation", { name: "Room view" }).getByRole("link", { name: "Files" }).click();
  await expect(files(page)).toBeVisible();
  await expect(page).toHaveURL(/[?&]view=files/);
}

async function createInBrowser(page: Page, path: string, content: string) {
  await files(page).getByRole("button", { name: "New file" }).click();
  const form = page.getByRole("form", { name: "New file" });
  await form.getByLabel("Path").fill(path);
  await form.getByLabel("Content").fill(content);
  await form.getByRole("button", { name: "Create file" }).click();
}

/** Opens the editor on the file shown (at its version), and optionally saves new content. */
async function editInBrowser(page: Page, path: string, content: string, save = true): Promise<Locator> {
  await viewer(page).getByRole("button", { name: "Edit" }).click();
  const form = page.getByRole("form", { name: `Edit ${path}` });
  await form.getByRole("textbox").fill(content);
  if (save) await form.getByRole("button", { name: "Save" }).click();
  return form;
}

/** A change made elsewhere: the workspace API called directly with the page's cookies. */
async function apiWrite(page: Page, baseURL: string, input: { teamId: string; path: string; content: string; expectedVersion: number }) {
  const res = await trpcMutation(page.request, baseURL, "workspace.write", input);
  expect(res.status(), await res.text()).toBe(200);
}

async function download(page: Page, link: Locator): Promise<{ name: string; body: Buffer }> {
  const [d]: [Download, void] = await Promise.all([page.waitForEvent("download"), link.click()]);
  return { name: d.suggestedFilename(), body: await readFile((await d.path())!) };
}

const PLAN = ["# Plan\n\nfirst line\n", "# Plan\n\nfirst line\nsecond line\n", "# Plan\n\nfirst line, changed\nsecond line\n"];

test("create a file, edit it twice, read its history, diff v1 with v3, download it and the workspace", async ({ page }, testInfo) => {
  const teamId = await createTeam(page, "Files team");
  await openFiles(page);
  await expect(files(page)).toContainText("The workspace is empty");

  await createInBrowser(page, "notes/plan.md", PLAN[0]!);
  await expect(status(page)).toHaveText("Created notes/plan.md as v1.");
  await expect(page).toHaveURL(new RegExp(`/teams/${teamId}\\?view=files&path=notes%2Fplan\\.md$`));
  await expect(tree(page).getByRole("button", { name: "Folder notes" })).toHaveAttribute("aria-expanded", "true");
  await expect(tree(page).getByRole("link", { name: "notes/plan.md" })).toBeVisible();
  // Markdown is rendered (a heading), with the version, author and size above it.
  await expect(viewer(page).getByRole("heading", { name: "Plan", exact: true })).toBeVisible();
  await expect(viewer(page)).toContainText(`v1 · ${PLAN[0]!.length} B · by ${OWNER.name}`);

  await editInBrowser(page, "notes/plan.md", PLAN[1]!);
  await expect(status(page)).toHaveText("Saved notes/plan.md as v2.");
  await expect(viewer(page)).toContainText("second line");
  await editInBrowser(page, "notes/plan.md", PLAN[2]!);
  await expect(status(page)).toHaveText("Saved notes/plan.md as v3.");
  await expect(tree(page).locator("li.tree-file").filter({ hasText: "plan.md" })).toContainText(`v3 · ${OWNER.name}`);

  // Other files show as code with line numbers.
  await createInBrowser(page, "src/app.ts", "export const one = 1;\nexport const two = 2;\n");
  await expect(status(page)).toHaveText("Created src/app.ts as v1.");
  const code = viewer(page).getByLabel("Content of src/app.ts v1");
  await expect(code.locator(".code-line")).toHaveText(["export const one = 1;", "export const two = 2;", ""]);
  await tree(page).getByRole("link", { name: "notes/plan.md" }).click();
  await expect(viewer(page).getByRole("heading", { name: "notes/plan.md" })).toBeVisible();
  await viewer(page).getByRole("button", { name: "Source" }).click();
  await expect(viewer(page).getByLabel("Content of notes/plan.md v3").locator(".code-line").nth(2)).toHaveText("first line, changed");

  // History: three versions by the owner, newest first.
  await expect(history(page).getByRole("listitem")).toHaveCount(3);
  await expect(history(page).getByRole("listitem").first()).toHaveAccessibleName("v3");
  for (const v of [1, 2, 3]) await expect(version(page, v)).toContainText(`by ${OWNER.name}`);

  // Diff v1 → v3: one line removed, two added, marked in words as well as colour.
  await history(page).getByRole("checkbox", { name: "Compare v1" }).check();
  await history(page).getByRole("checkbox", { name: "Compare v3" }).check();
  const diff = page.getByRole("region", { name: "Changes from v1 to v3" });
  await expect(diff).toContainText("2 lines added, 1 removed");
  const table = diff.getByRole("table", { name: "Changes from v1 to v3" });
  await expect(table.getByRole("row").filter({ hasText: "first line, changed" })).toContainText("added");
  await expect(table.getByRole("row").filter({ hasText: "second line" })).toContainText("added");
  await expect(table.getByRole("row").filter({ hasText: "removed" })).toHaveCount(1);
  await expect(table.getByRole("row").filter({ hasText: "removed" })).toContainText("first line");
  await diff.getByRole("button", { name: "Side by side" }).click();
  await expect(table.getByRole("row").filter({ hasText: "first line, changed" })).toContainText("removedfirst line");
  await page.screenshot({ path: testInfo.outputPath("files-view.png") });
  await diff.screenshot({ path: testInfo.outputPath("files-diff.png") });

  // An older version can be opened, says it is older, and downloads as itself.
  await version(page, 1).getByRole("link", { name: "View v1" }).click();
  await expect(page).toHaveURL(/&version=1$/);
  await expect(viewer(page)).toContainText("An older version: the latest is v3.");
  await expect(viewer(page).getByRole("button", { name: "Edit" })).toHaveCount(0);
  const v1 = await download(page, viewer(page).getByRole("link", { name: "Download v1" }));
  expect(v1).toEqual({ name: "plan.md", body: Buffer.from(PLAN[0]!) });

  const zip = await download(page, files(page).getByRole("link", { name: "Download all (zip)" }));
  expect(zip.name).toBe(`workspace-${teamId}.zip`);
  expect(await unzip(zip.body)).toEqual([
    ["notes/plan.md", PLAN[2]!],
    ["src/app.ts", "export const one = 1;\nexport const two = 2;\n"],
  ]);

  // Collapsing a folder hides its files.
  await tree(page).getByRole("button", { name: "Folder src" }).click();
  await expect(tree(page).getByRole("link", { name: "src/app.ts" })).toHaveCount(0);
  await expect(tree(page).getByRole("button", { name: "Folder src" })).toHaveAttribute("aria-expanded", "false");
});

test("a stale edit shows the conflict with the current content; the person reloads or overwrites deliberately", async ({ page, baseURL }) => {
  const teamId = await createTeam(page, "Conflicting files");
  await openFiles(page);
  await createInBrowser(page, "draft.txt", "first text\n");
  await expect(status(page)).toHaveText("Created draft.txt as v1.");

  // The editor is opened at v1; the file changes elsewhere meanwhile (the room sees it live).
  const editor = await editInBrowser(page, "draft.txt", "my text\n", false);
  await apiWrite(page, baseURL!, { teamId, path: "draft.txt", content: "their text\n", expectedVersion: 1 });
  await expect(editor.getByRole("note")).toContainText("draft.txt is at v2 now since you opened v1");
  await editor.getByRole("button", { name: "Save" }).click();

  const conflict = page.getByRole("alert", { name: "Conflict" });
  await expect(conflict).toContainText("Not saved: draft.txt changed after you opened v1: it is at v2 now.");
  await expect(conflict).toContainText(`written by ${OWNER.name}`);
  await expect(conflict.getByRole("region", { name: "Current content" })).toContainText("their text");
  const mine = conflict.getByRole("table", { name: "Your text compared with v2" });
  await expect(mine.getByRole("row").filter({ hasText: "their text" })).toContainText("removed");
  await expect(mine.getByRole("row").filter({ hasText: "my text" })).toContainText("added");
  // Nothing was overwritten.
  await expect(version(page, 2)).toBeVisible();
  await expect(history(page).getByRole("listitem")).toHaveCount(2);

  // Overwriting is a deliberate second send, with the current version.
  await conflict.getByRole("button", { name: "Overwrite v2 with my text" }).click();
  await expect(status(page)).toHaveText("Saved draft.txt as v3.");
  await expect(viewer(page).getByLabel("Content of draft.txt v3")).toContainText("my text");
  await expect(conflict).toHaveCount(0);

  // Or the person takes the current version instead.
  await editInBrowser(page, "draft.txt", "lost text\n", false);
  await apiWrite(page, baseURL!, { teamId, path: "draft.txt", content: "newer text\n", expectedVersion: 3 });
  await expect(viewer(page)).toContainText("v4 ·");
  await page.getByRole("form", { name: "Edit draft.txt" }).getByRole("button", { name: "Save" }).click();
  await expect(conflict).toContainText("it is at v4 now");
  await conflict.getByRole("button", { name: "Reload the current version" }).click();
  await expect(page.getByRole("form", { name: "Edit draft.txt" })).toHaveCount(0);
  await expect(viewer(page).getByLabel("Content of draft.txt v4")).toContainText("newer text");
  await expect(history(page).getByRole("listitem")).toHaveCount(4);

  // A new file where one exists is a conflict too.
  await createInBrowser(page, "draft.txt", "again\n");
  await expect(conflict).toContainText("Not created: draft.txt already exists: it is at v4.");
  await conflict.getByRole("button", { name: "Open the existing file" }).click();
  await expect(page.getByRole("form", { name: "New file" })).toHaveCount(0);

  // A delete sends the version shown when Delete was pressed.
  await viewer(page).getByRole("button", { name: "Delete" }).click();
  const confirm = viewer(page).getByRole("group", { name: "Delete draft.txt" });
  await expect(confirm).toContainText("Delete draft.txt (v4)?");
  await apiWrite(page, baseURL!, { teamId, path: "draft.txt", content: "newest text\n", expectedVersion: 4 });
  await expect(confirm).toContainText("It is at v5 now.");
  await confirm.getByRole("button", { name: "Delete file" }).click();
  await expect(conflict).toContainText("Not deleted: draft.txt changed after you opened v4: it is at v5 now.");
  await expect(conflict.getByRole("region", { name: "Current content" })).toContainText("newest text");
  await conflict.getByRole("button", { name: "Delete v5 anyway" }).click();
  await expect(status(page)).toHaveText("Deleted draft.txt (v6 records the deletion).");
  await expect(tree(page).getByRole("link", { name: "draft.txt" })).toHaveCount(0);
  await expect(viewer(page)).toContainText(`Deleted: v6 by ${OWNER.name}`);
  await expect(version(page, 6)).toContainText("deleted");
});

test("refused changes read as sentences, and write-scope warnings show after the save and in the history", async ({ page }) => {
  await createTeam(page, "Scoped files");
  // The Lead's task covers notes/: a person writing there is inside another's scope.
  await send(page, '/tool team_task_create {"subject":"Write notes","description":"","write_scopes":["notes"]}');
  await expect(page.getByRole("listitem", { name: "task-1 Write notes" })).toBeVisible({ timeout: 20_000 });
  await page.getByRole("button", { name: "Claim task-1" }).click();
  await expect(page.getByRole("region", { name: "In progress tasks" }).getByRole("listitem", { name: "task-1 Write notes" })).toBeVisible();
  await openFiles(page);

  await createInBrowser(page, "../outside.md", "x");
  await expect(files(page).getByRole("alert")).toHaveText("That path cannot be used: it contains '..' (path traversal).");
  await page.getByRole("form", { name: "New file" }).getByRole("button", { name: "Cancel" }).click();

  await createInBrowser(page, "notes/mine.md", "mine\n");
  await expect(status(page)).toHaveText("Created notes/mine.md as v1.");
  const warning = "Write-scope warning: notes/mine.md is inside write scope notes of task-1, in progress by lead.";
  await expect(files(page).locator(".change-notice").getByRole("note")).toHaveText(`⚠ ${warning}`);
  await expect(version(page, 1).getByRole("note")).toHaveText(`⚠ ${warning}`);
});

test("an agent's workspace tool card links to the file version it wrote", async ({ page }) => {
  const teamId = await createTeam(page, "Tool links");
  await send(page, '/tool workspace_write {"path":"agent/out.md","content":"# From the agent\\n"}');
  const link = transcript(page).getByRole("link", { name: "agent/out.md v1" });
  await expect(link).toBeVisible({ timeout: 20_000 });
  await link.click();
  await expect(page).toHaveURL(new RegExp(`/teams/${teamId}\\?view=files&path=agent%2Fout\\.md&version=1$`));
  await expect(viewer(page).getByRole("heading", { name: "From the agent" })).toBeVisible();
  await expect(version(page, 1)).toContainText("by lead (agent)");
  // The Lead has no task covering the path: the advisory warning is on the version.
  await expect(version(page, 1).getByRole("note")).toContainText("agent/out.md is outside your write scopes");
});

test("two browsers see the same files live", async ({ browser }) => {
  const a = await (await browser.newContext()).newPage();
  const b = await (await browser.newContext()).newPage();
  const teamId = await createTeam(a, "Live files");
  await openFiles(a);
  await b.goto(`/teams/${teamId}?view=files`);
  await expect(files(b)).toContainText("The workspace is empty");
  // Marks this page load: a reload would lose it.
  await b.evaluate(() => ((window as unknown as { loadedOnce: boolean }).loadedOnce = true));

  await createInBrowser(a, "shared/live.md", "one\n");
  await expect(tree(b).getByRole("link", { name: "shared/live.md" })).toBeVisible();
  await tree(b).getByRole("link", { name: "shared/live.md" }).click();
  await expect(viewer(b)).toContainText("one");

  await editInBrowser(a, "shared/live.md", "two\n");
  await expect(viewer(b)).toContainText("v2 ·");
  await expect(viewer(b)).toContainText("two");
  await expect(history(b).getByRole("listitem")).toHaveCount(2);

  await viewer(a).getByRole("button", { name: "Delete" }).click();
  await viewer(a).getByRole("button", { name: "Delete file" }).click();
  await expect(tree(b).getByRole("link", { name: "shared/live.md" })).toHaveCount(0);
  await expect(viewer(b)).toContainText(`Deleted: v3 by ${OWNER.name}`);
  expect(await b.evaluate(() => (window as unknown as { loadedOnce?: boolean }).loadedOnce)).toBe(true);
});

test("a viewer reads and downloads files but gets no controls that change them", async ({ page, browser, baseURL }) => {
  const teamId = await createTeam(page, "Read-only files");
  await openFiles(page);
  await createInBrowser(page, "readme.md", "# Read me\n");
  await expect(status(page)).toHaveText("Created readme.md as v1.");
  const invite = await trpcMutation(page.request, baseURL!, "people.invite", { teamId, role: "viewer" });
  const { token } = ((await invite.json()) as { result: { data: { json: { token: string } } } }).result.data.json;

  const context = await anonymousContext(browser, baseURL!);
  const viewerPage = await context.newPage();
  await signUpOverApi(viewerPage.request, baseURL!, { name: "Vic Viewer", email: "vic@files.test", password: "vic-password-1" }, token);
  await viewerPage.goto(`/teams/${teamId}?view=files&path=readme.md`);
  await expect(viewerPage.getByLabel("your role: viewer")).toBeVisible();
  await expect(viewer(viewerPage).getByRole("heading", { name: "Read me" })).toBeVisible();
  await expect(viewer(viewerPage).getByRole("link", { name: "Download v1" })).toBeVisible();
  await expect(files(viewerPage).getByRole("link", { name: "Download all (zip)" })).toBeVisible();
  await expect(files(viewerPage).getByRole("button", { name: "New file" })).toHaveCount(0);
  await expect(viewer(viewerPage).getByRole("button", { name: "Edit" })).toHaveCount(0);
  await expect(viewer(viewerPage).getByRole("button", { name: "Delete" })).toHaveCount(0);
  await context.close();
});

test("the keyless team scenario leaves its files: notes, an edited result, and the Lead's answer listing them", async ({ page }) => {
  test.setTimeout(120_000); // the whole team plays out first
  await createTeam(page, "Scenario files");
  await send(page, "Build a tiny todo app");
  await expect(finalAnswer(page)).toBeVisible({ timeout: 90_000 });
  await expect(transcript(page)).toContainText("docs/research/notes.md (version 1, by researcher)");
  await expect(transcript(page)).toContainText("src/result.md (version 2, by implementer)");

  await openFiles(page);
  await expect(tree(page).getByRole("link", { name: "docs/research/notes.md" })).toBeVisible();
  await tree(page).getByRole("link", { name: "src/result.md" }).click();
  await expect(viewer(page)).toContainText("v2");
  await expect(viewer(page)).toContainText("Status: checked against the research");
  // Each version with its author and the task the author had in progress.
  await expect(version(page, 2)).toContainText("implementer");
  await expect(version(page, 2)).toContainText("task-2");
  await expect(version(page, 1)).toContainText("implementer");
  await history(page).getByRole("checkbox", { name: "Compare v1" }).check();
  await history(page).getByRole("checkbox", { name: "Compare v2" }).check();
  const diff = page.getByRole("table", { name: "Changes from v1 to v2" });
  await expect(diff.getByRole("row").filter({ hasText: "Status: draft" })).toContainText("removed");
  await expect(diff.getByRole("row").filter({ hasText: "Status: checked against the research" })).toContainText("added");
});

test("a person and an agent edit one file at once: the one who saw the older version gets the conflict", async ({ page, baseURL }) => {
  const teamId = await createTeam(page, "Racing an agent");
  await apiWrite(page, baseURL!, { teamId, path: "shared.md", content: "status: open\n", expectedVersion: 0 });
  await openFiles(page);
  await tree(page).getByRole("link", { name: "shared.md" }).click();
  const editor = await editInBrowser(page, "shared.md", "status: closed by a person\n", false);

  // The Lead edits the same file through its tool while the person's editor is open at v1.
  const prompt = await trpcMutation(page.request, baseURL!, "session.prompt", {
    sessionId: teamId,
    text: '/tool workspace_edit {"path":"shared.md","old_text":"status: open","new_text":"status: taken by the lead"}',
  });
  expect(prompt.status(), await prompt.text()).toBe(200);
  await expect(editor.getByRole("note")).toContainText("shared.md is at v2 now since you opened v1", { timeout: 30_000 });
  await editor.getByRole("button", { name: "Save" }).click();
  const conflict = page.getByRole("alert", { name: "Conflict" });
  await expect(conflict).toContainText("Not saved: shared.md changed after you opened v1: it is at v2 now.");
  await expect(conflict).toContainText("written by lead");
  await expect(conflict.getByRole("region", { name: "Current content" })).toContainText("status: taken by the lead");

  // The agent loses the next round: its edit names text the person's overwrite removed.
  await conflict.getByRole("button", { name: "Overwrite v2 with my text" }).click();
  await expect(status(page)).toHaveText("Saved shared.md as v3.");
  await page.getByRole("navigation", { name: "Room view" }).getByRole("link", { name: "Agent" }).click();
  await send(page, '/tool workspace_edit {"path":"shared.md","old_text":"status: taken by the lead","new_text":"status: again"}');
  await expect(transcript(page)).toContainText("WORKSPACE_EDIT_NOT_FOUND", { timeout: 30_000 });
});
