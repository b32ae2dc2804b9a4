import { expect, test, type Page } from "@playwright/test";
import { createTemporaryDatabase, temporaryDatabaseName, testServerUrl } from "../server/testing/temporary-db";
import { anonymousContext, createInstanceOwner, fillAccountForm, trpcMutation, trpcQuery, type TestPerson } from "./accounts";
import { agent, createTeam, transcript, panelTab } from "./helpers";
import { startServer, stopServer } from "./server";

// Three people in one team room, on a server of its own started on a fresh database: the
// owner creates the instance and a team and invites a member and a viewer by link; they sign
// up through the links; everyone sees everyone live (presence, prompts, board); the viewer can
// act on nothing, in the page or through the API; removing the member ends their access at once.

const port = Number(process.env.E2E_PEOPLE_PORT ?? 3191);
const base = `http://127.0.0.1:${port}/`;

const OLIVE: TestPerson = { name: "Olive Owner", email: "olive@people.test", password: "olive-password-1" };
const BOB: TestPerson = { name: "Bob Member", email: "bob@people.test", password: "bob-password-1" };
const VERA: TestPerson = { name: "Vera Viewer", email: "vera@people.test", password: "vera-password-1" };

const inRoom = (page: Page, person: TestPerson) =>
  page.getByRole("list", { name: "People in the room" }).getByRole("listitem", { name: new RegExp(`^${person.name}`) });

/** The owner makes an invite link for a role; the page shows it once. */
async function inviteLink(owner: Page, role: "member" | "viewer"): Promise<string> {
  const people = owner.getByRole("region", { name: "People" });
  await people.getByLabel("Invite as").selectOption(role);
  await people.getByRole("button", { name: "Create invite link" }).click();
  const link = await people.getByRole("textbox", { name: `Invite link for a ${role}` }).inputValue();
  expect(link).toMatch(new RegExp(`^${base}invite/inv_`));
  return link;
}

/** Opens an invite link signed out, makes an account through it and lands in the team room. */
async function joinByLink(page: Page, link: string, person: TestPerson, role: string, teamId: string): Promise<void> {
  await page.goto(link);
  await expect(page.getByRole("heading", { name: "Join People room" })).toBeVisible();
  await expect(page.getByLabel("Invitation")).toContainText(`${OLIVE.name} invited you to join People room as a ${role}`);
  await fillAccountForm(page, person);
  await page.getByRole("button", { name: "Create account and join" }).click();
  await expect(page).toHaveURL(new RegExp(`/teams/${teamId}$`));
  await expect(page.getByRole("heading", { name: "People room", level: 1 })).toBeVisible();
  await expect(page.getByLabel(`your role: ${role}`)).toBeVisible();
}

test("three people in a room: invites, presence, attribution, a viewer who cannot act, and a removal that ends access at once", async ({
  browser,
}, testInfo) => {
  test.setTimeout(240_000);
  const database = await createTemporaryDatabase(testServerUrl(), temporaryDatabaseName("at_e2e_people_"), { migrate: false });
  const server = await startServer(database.url, port);
  // Three people, three browser contexts: each keeps its own cookies.
  const contexts = [await anonymousContext(browser, base), await anonymousContext(browser, base), await anonymousContext(browser, base)] as const;
  try {
    const owner = await contexts[0].newPage();
    const member = await contexts[1].newPage();
    const viewer = await contexts[2].newPage();

    // The owner creates the instance (fresh-instance page) and a team with a teammate.
    await createInstanceOwner(owner, OLIVE);
    const teamId = await createTeam(owner, "People room");
    const roster = owner.getByRole("region", { name: "Roster" });
    await roster.getByRole("button", { name: "Add a teammate" }).click();
    const add = owner.getByRole("form", { name: "Add a teammate" });
    await add.getByLabel("Name (kebab-case)").fill("helper");
    await add.getByLabel("Description").fill("Helps out");
    await add.getByLabel("First task").fill("Say hello");
    await add.getByRole("button", { name: "Add" }).click();
    await expect(roster.getByRole("button", { name: /^helper \(teammate\)/ })).toContainText(`added by ${OLIVE.name}`);

    // A member and a viewer sign up through their links (sign-up is otherwise closed).
    const memberLink = await inviteLink(owner, "member");
    const viewerLink = await inviteLink(owner, "viewer");
    await expect(owner.getByRole("list", { name: "Open invites" }).getByRole("listitem")).toHaveCount(2);
    await joinByLink(member, memberLink, BOB, "member", teamId);
    await joinByLink(viewer, viewerLink, VERA, "viewer", teamId);
    await expect(owner.getByRole("region", { name: "People" }).getByRole("listitem", { name: /,/ })).toHaveCount(3);
    await expect(owner.getByRole("list", { name: "Open invites" })).toHaveCount(0);
    // A used link lets nobody else in.
    const late = await anonymousContext(browser, base);
    const latePage = await late.newPage();
    await latePage.goto(memberLink);
    await expect(latePage.getByRole("alert").filter({ hasText: "has let in as many people as it allows" })).toBeVisible();
    await late.close();

    // Presence: everyone sees everyone, one chip each, and which agent each watches.
    for (const page of [owner, member, viewer]) {
      for (const person of [OLIVE, BOB, VERA]) await expect(inRoom(page, person)).toBeVisible();
      await expect(page.getByRole("list", { name: "People in the room" }).getByRole("listitem")).toHaveCount(3);
    }
    await viewer.getByRole("region", { name: "Roster" }).getByRole("button", { name: /^helper \(teammate\)/ }).click();
    await expect(agent(viewer, "helper")).toBeVisible();
    await expect(inRoom(owner, VERA)).toContainText("watching helper");
    await expect(inRoom(member, OLIVE)).toContainText("watching lead");

    // The member types to the Lead (the others see it while it lasts), then sends.
    const box = member.getByRole("textbox", { name: "Prompt" });
    const prompt = '/tool team_task_create {"subject":"Shared plan","description":"made by the member"}';
    const typing = box.pressSequentially(prompt, { delay: 60 });
    await expect(inRoom(owner, BOB)).toContainText("typing to lead");
    await expect(inRoom(viewer, BOB)).toContainText("typing to lead");
    await typing;
    await box.press("Enter");
    await viewer.getByRole("region", { name: "Roster" }).getByRole("button", { name: /^lead \(lead\)/ }).click();
    for (const page of [owner, member, viewer]) {
      await expect(transcript(page).getByRole("article", { name: `Prompt from ${BOB.name}` })).toContainText("Shared plan");
    }
    await expect(inRoom(owner, BOB)).not.toContainText("typing");
    // The log records the person on the prompt (id and name); the model's history builder puts
    // "From <name>:" on its first line from exactly this (server/models/human-prompt.test.ts).
    const bobId = await trpcQuery<{ me: { id: string } }>(member.request, base, "account.status", undefined).then((s) => s.me.id);
    const log = await trpcQuery<{ events: { payload: { kind: string; text?: string; source?: unknown } }[] }>(
      owner.request,
      base,
      "session.transcript",
      { sessionId: teamId },
    );
    const sent = log.events.find((e) => e.payload.kind === "user_message" && e.payload.text?.includes("Shared plan"));
    expect(sent?.payload.source).toEqual({ kind: "human", userId: bobId, name: BOB.name });

    // A board edit by the member shows the member's name on the task, live, in the owner's room.
    await expect(member.getByRole("listitem", { name: "task-1 Shared plan" })).toBeVisible({ timeout: 30_000 });
    await member.getByRole("button", { name: "Claim task-1" }).click();
    const ownersTask = owner.getByRole("region", { name: "In progress tasks" }).getByRole("listitem", { name: "task-1 Shared plan" });
    await expect(ownersTask).toContainText(`changed by ${BOB.name}`);
    await panelTab(owner, "Activity");
    await expect(owner.getByRole("region", { name: "Recent activity" })).toContainText(`${BOB.name} claimed task-1`);

    // Presence says where: the others see the member edit the task, then on the timeline, then in Files.
    await member.getByRole("button", { name: "Edit task-1" }).click();
    await expect(inRoom(owner, BOB)).toContainText("editing task-1");
    await member.getByRole("textbox", { name: "Subject of task-1" }).press("Escape");
    await expect(inRoom(owner, BOB)).not.toContainText("editing");
    const views = member.getByRole("navigation", { name: "Room view" });
    await views.getByRole("link", { name: "Timeline" }).click();
    await expect(inRoom(owner, BOB)).toContainText("on the timeline");
    await expect(inRoom(viewer, BOB)).toContainText("on the timeline");
    await views.getByRole("link", { name: "Files" }).click();
    await expect(inRoom(owner, BOB)).toContainText("in Files");
    await views.getByRole("link", { name: "Agent" }).click();
    await expect(inRoom(owner, BOB)).toContainText("watching lead");
    await owner.screenshot({ path: testInfo.outputPath("people-owner.png"), fullPage: true });

    // The viewer sees all of it live, with no control that acts.
    await expect(viewer.getByRole("region", { name: "In progress tasks" }).getByRole("listitem", { name: "task-1 Shared plan" })).toContainText(
      `changed by ${BOB.name}`,
    );
    await expect(viewer.getByRole("note").filter({ hasText: "Viewers watch; ask an owner for member access" }).first()).toBeVisible();
    for (const control of [
      viewer.getByRole("textbox", { name: "Prompt" }),
      viewer.getByRole("button", { name: "Send" }),
      viewer.getByRole("button", { name: "Stop", exact: true }),
      viewer.getByRole("button", { name: /task-1$/ }),
      viewer.getByRole("button", { name: "Add a teammate" }),
      viewer.getByRole("button", { name: "Create invite link" }),
      viewer.getByRole("combobox", { name: /^Role of/ }),
      viewer.getByRole("button", { name: /^Remove/ }),
    ]) {
      await expect(control).toHaveCount(0);
    }
    // A message's menu offers a viewer copying, never forking.
    await viewer.getByRole("region", { name: "Transcript" }).getByRole("button", { name: "Message actions" }).first().click();
    await expect(viewer.getByRole("menuitem", { name: "Copy text" })).toBeVisible();
    await expect(viewer.getByRole("menuitem", { name: /^Fork a new team/ })).toHaveCount(0);
    await viewer.keyboard.press("Escape");
    await viewer.screenshot({ path: testInfo.outputPath("people-viewer.png"), fullPage: true });
    // Nor through the API: a direct prompt is refused, and nothing is queued or logged.
    const refused = await trpcMutation(viewer.request, base, "session.prompt", { sessionId: teamId, text: "a viewer's prompt" });
    expect(refused.status()).toBe(403);
    expect(((await refused.json()) as { error: { json: { data: { code: string } } } }).error.json.data.code).toBe("FORBIDDEN");
    const after = await trpcQuery<{ events: { payload: { kind: string; text?: string } }[] }>(owner.request, base, "session.transcript", {
      sessionId: teamId,
    });
    expect(after.events.some((e) => e.payload.text?.includes("a viewer's prompt"))).toBe(false);

    // The last owner cannot leave.
    await owner.getByRole("region", { name: "People" }).getByRole("button", { name: "Leave team" }).click();
    // Leaving asks first, naming what it does; Cancel (where focus starts) leaves nothing done.
    const leaving = owner.getByRole("alertdialog", { name: "Leave this team?" });
    await expect(leaving).toContainText("You lose access at once");
    await expect(leaving.getByRole("button", { name: "Cancel" })).toBeFocused();
    await owner.keyboard.press("Escape");
    await expect(leaving).toHaveCount(0);
    await owner.getByRole("region", { name: "People" }).getByRole("button", { name: "Leave team" }).click();
    await owner.getByRole("alertdialog", { name: "Leave this team?" }).getByRole("button", { name: "Leave team" }).click();
    await expect(owner.getByRole("region", { name: "People" }).getByRole("alert")).toContainText("last owner");

    // Removing the member ends their access at once: their open room says so (its live feed
    // was refused), and the API refuses them as a stranger.
    await owner.getByRole("region", { name: "People" }).getByRole("button", { name: `Remove ${BOB.name}` }).click();
    await owner.getByRole("alertdialog", { name: `Remove ${BOB.name} from this team?` }).getByRole("button", { name: `Remove ${BOB.name}` }).click();
    await expect(member.getByRole("heading", { name: "You no longer have access to this team" })).toBeVisible({ timeout: 10_000 });
    await expect(member.getByRole("link", { name: "Back to your teams" })).toBeVisible();
    await member.screenshot({ path: testInfo.outputPath("people-removed.png") });
    await expect(inRoom(owner, BOB)).toHaveCount(0);
    const stranger = await trpcMutation(member.request, base, "session.prompt", { sessionId: teamId, text: "still here?" });
    expect(stranger.status()).toBe(404);
    await panelTab(owner, "Activity");
    await expect(owner.getByRole("region", { name: "Recent activity" })).toContainText(`${OLIVE.name} removed ${BOB.name} from the team`);

    // Invited again, Bob (signed in) joins with one button; a revoked link lets nobody in.
    const again = await inviteLink(owner, "member");
    const revoked = await inviteLink(owner, "viewer");
    const open = owner.getByRole("list", { name: "Open invites" });
    await expect(open.getByRole("listitem")).toHaveCount(2);
    await open.getByRole("listitem", { name: /^viewer invite/ }).getByRole("button", { name: "Revoke" }).click();
    await expect(open.getByRole("listitem")).toHaveCount(1);
    await member.goto(revoked);
    await expect(member.getByRole("alert").filter({ hasText: "This invite link was revoked" })).toBeVisible();
    await member.goto(again);
    await member.getByRole("button", { name: "Join People room as member" }).click();
    await expect(member).toHaveURL(new RegExp(`/teams/${teamId}$`));
    await expect(member.getByLabel("your role: member")).toBeVisible();
    await member.getByRole("link", { name: "Agent Teams" }).click();
    await expect(member.getByRole("list", { name: "Teams" }).getByRole("listitem")).toHaveCount(1);
    await expect(member.getByRole("list", { name: "Teams" }).getByRole("listitem")).toContainText("People room");
    await expect(member.getByRole("list", { name: "Teams" }).getByLabel("your role: member")).toBeVisible();

    // A role change reaches the open room live: the viewer made a member gets the composer.
    await owner.getByRole("region", { name: "People" }).getByRole("combobox", { name: `Role of ${VERA.name}` }).selectOption("member");
    await expect(viewer.getByLabel("your role: member")).toBeVisible();
    await expect(viewer.getByRole("textbox", { name: "Prompt" })).toBeVisible();
  } finally {
    await Promise.all(contexts.map((c) => c.close()));
    await stopServer(server);
    await database.drop().catch(() => undefined);
  }
});
