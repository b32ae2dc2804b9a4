import { describe, expect } from "vitest";
import { AppError } from "../errors";
import { asUserId, type SessionId } from "../ids";
import { ScriptedModel } from "../models/scripted";
import { listNotifications, markRead, setNotificationSettings } from "../people/notifications";
import type { Person } from "../people/person";
import { promptSession } from "../runtime/sessions";
import { recordTeamEvent } from "../runtime/team-events";
import { runtimeTest } from "../testing/fixtures";
import { createTestPerson } from "../testing/people";
import { newTestSession, waitFor, waitForTurns, type TestRuntime } from "../testing/runtime-harness";
import { answerQuestion, decideApproval, pendingRequests } from "./approvals";
import { setBudget } from "./budget";
import { dispatchTeamEvents } from "./dispatch";
import { leadOf } from "../members/membership";
import { promptAs } from "./person-actions";
import { createTask } from "./task-board";
import { setToolMode } from "./tool-policy";

// Notifications (SPEC.md §17): what happens in a team reaches its people's inboxes, each once,
// as each wants: requests to decide reach those who may decide, answers and failures everyone,
// muted kinds nobody; a person reads and marks only their own.

// The keyless model, and no other provider configured (a turn on another model fails).
const keyless = new ScriptedModel({ delayMs: 1 });
const it = runtimeTest({
  team: true,
  resolveModel: (choice) => {
    if (choice.provider !== "scripted") throw new AppError("MODEL_UNAVAILABLE", `Model provider "${choice.provider}" is not configured on this server`);
    return keyless;
  },
});

async function teamOfThree(rt: TestRuntime, title: string) {
  const owner = await createTestPerson(rt.db, `Olive ${title}`);
  const member = await createTestPerson(rt.db, `Max ${title}`);
  const viewer = await createTestPerson(rt.db, `Vic ${title}`);
  const lead = await newTestSession(rt.db, title, owner);
  await rt.db.teamPerson.createMany({ data: [{ teamId: lead, userId: member.id, role: "member" }, { teamId: lead, userId: viewer.id, role: "viewer" }] });
  return { lead, owner, member, viewer, by: { person: owner, teamId: lead } };
}

const titles = async (rt: TestRuntime, p: Person) => (await listNotifications(rt.db.sql, p.id)).items.map((n) => n.title);

async function notified(rt: TestRuntime, p: Person, count: number) {
  return waitFor(
    async () => {
      const page = await listNotifications(rt.db.sql, p.id);
      return page.items.length >= count ? page : null;
    },
    20_000,
    `${count} notifications for ${p.name}`,
  );
}

describe("notifications", () => {
  it("a request reaches who may decide it, the Lead's answer everyone; each once, read per person", async ({ rt }) => {
    const { lead, owner, member, viewer, by } = await teamOfThree(rt, "Notified");
    await setToolMode(rt.db, by, rt.runtime.toolNamesFor(lead), "workspace_write", "ask");
    await promptSession(rt.db, lead, { text: '/tool workspace_write {"path":"a.md","content":"x","expected_version":0}' });

    const page = await notified(rt, member, 1);
    expect(page.unread).toBe(1);
    expect(page.items[0]).toMatchObject({ kind: "approval.requested", teamId: lead, title: "lead asks to run workspace_write", body: "In Notified: approve or deny.", pending: true, read: false });
    expect(await titles(rt, owner)).toEqual(["lead asks to run workspace_write"]);
    // A viewer cannot decide, so is not asked to.
    expect(await titles(rt, viewer)).toEqual([]);
    // A page past the last item is empty and still counts the unread (page and count are read together).
    expect(await listNotifications(rt.db.sql, member.id, { before: page.items.at(-1)!.id })).toEqual({ items: [], unread: 1 });

    // Decided from the inbox: the request the notification names, and it no longer waits.
    const [request] = await pendingRequests(rt.db.sql, lead);
    expect(page.items[0]!.approvalId).toBe(request!.id);
    await decideApproval(rt.db, by, request!.id, { approve: true, note: null, alwaysAllow: false });
    expect((await listNotifications(rt.db.sql, member.id)).items[0]!.pending).toBe(false);

    // The Lead's answer reaches all three, viewers too.
    await waitForTurns(rt.db, lead, 1, 20_000);
    for (const p of [owner, member, viewer]) await notified(rt, p, p === viewer ? 1 : 2);
    expect((await listNotifications(rt.db.sql, viewer.id)).items[0]).toMatchObject({ kind: "team.finished", title: "Notified: the Lead answered" });

    // A second dispatch pass finds nothing left: each event was fanned out once.
    expect(await dispatchTeamEvents(rt.db)).toBe(0);
    expect((await listNotifications(rt.db.sql, owner.id)).items).toHaveLength(2);

    // Marking read: only the person's own notifications move.
    const ownerIds = (await listNotifications(rt.db.sql, owner.id)).items.map((n) => n.id);
    expect(await markRead(rt.db, member.id, { ids: ownerIds })).toBe(0);
    expect(await markRead(rt.db, owner.id, { ids: ownerIds.slice(0, 1) })).toBe(1);
    expect((await listNotifications(rt.db.sql, owner.id)).unread).toBe(1);
    expect(await markRead(rt.db, owner.id, { all: true })).toBe(1);
    expect((await listNotifications(rt.db.sql, owner.id)).unread).toBe(0);
    expect((await listNotifications(rt.db.sql, member.id)).unread).toBe(2);
  });

  it("questions, failures and a reached budget; a muted kind reaches nobody who muted it", async ({ rt }) => {
    const { lead, owner, member, viewer, by } = await teamOfThree(rt, "Muted");
    await setNotificationSettings(rt.db, asUserId(member.id), { muted: ["question.asked"] });
    await promptSession(rt.db, lead, { text: '/tool ask_humans {"question":"Ship on Friday?","choices":["yes","no"]}' });
    await notified(rt, owner, 1);
    expect(await titles(rt, owner)).toEqual(["lead asks: Ship on Friday?"]);
    const [question] = await pendingRequests(rt.db.sql, lead);
    await answerQuestion(rt.db, by, question!.id, "yes");
    await waitForTurns(rt.db, lead, 1, 20_000);
    await notified(rt, member, 1);
    // The member muted questions: only the answer reached them.
    expect(await titles(rt, member)).toEqual(["Muted: the Lead answered"]);

    // A turn that fails (its model is not offered here) is told to everyone.
    await rt.db.session.update({ where: { id: lead }, data: { model: { provider: "openai-compatible", model: "not-configured" } } });
    await promptSession(rt.db, lead, { text: "hello" });
    const failed = await notified(rt, viewer, 2);
    expect(failed.items[0]).toMatchObject({ kind: "agent.failed", title: "lead failed in Muted", body: expect.stringContaining("not configured") });

    // A budget too small for the next step stops the team, and says so once.
    await rt.db.session.update({ where: { id: lead }, data: { model: { provider: "scripted", model: "keyless" } } });
    await setBudget(rt.db, by, { tokens: 1, costNanos: null });
    await promptSession(rt.db, lead, { text: "again" });
    const stopped = await notified(rt, viewer, 3);
    expect(stopped.items[0]).toMatchObject({ kind: "budget.reached", title: "Muted reached its budget" });
    expect((await rt.db.teamEvent.findMany({ where: { teamId: lead as SessionId, kind: "budget.reached" } })).length).toBe(1);
  });

  it("events fanned out by passes running at once: each person gets each event once", async ({ rt }) => {
    const { lead, owner, member, viewer } = await teamOfThree(rt, "Racing");
    await rt.db.sqlTx(async (tx) => {
      for (let i = 0; i < 30; i++) await recordTeamEvent(tx, lead, `test:race:${i}`, { kind: "mention", userIds: [owner.id, member.id, viewer.id], by: "Pat", where: "A task", text: `@all ${i}` });
    });
    // The same event recorded again (a writer that ran twice) is one event.
    await recordTeamEvent(rt.db.sql, lead, "test:race:0", { kind: "mention", userIds: [owner.id], by: "Pat", where: "A task", text: "again" });
    await Promise.all([dispatchTeamEvents(rt.db, 7), dispatchTeamEvents(rt.db, 7), dispatchTeamEvents(rt.db, 7), dispatchTeamEvents(rt.db)]);
    await waitFor(async () => (await rt.db.teamEvent.count({ where: { teamId: lead, dispatchedAt: null } })) === 0 || null, 20_000, "every event dispatched");
    for (const p of [owner, member, viewer]) {
      const rows = await rt.db.notification.findMany({ where: { userId: p.id, teamId: lead }, select: { eventId: true } });
      expect(rows).toHaveLength(30);
      expect(new Set(rows.map((r) => r.eventId)).size).toBe(30);
    }
  });

  it("a mention in a prompt or a task reaches the person named, not its author", async ({ rt }) => {
    const { lead, owner, member, viewer, by } = await teamOfThree(rt, "Mentions");
    await promptAs(rt.db, lead, { text: "@max please review, and @olive too; mail vic@example.com", by });
    const page = await notified(rt, member, 1);
    expect(page.items[0]).toMatchObject({ kind: "mention", title: "Olive Mentions mentioned you in Mentions", body: expect.stringContaining("A prompt: @max please review") });
    // The author named herself: not notified. The viewer was not named (an address is no mention).
    await createTask(rt.db, leadOf(lead), { subject: "Check with @Vic", description: "" });
    await notified(rt, viewer, 1);
    expect((await listNotifications(rt.db.sql, viewer.id)).items[0]).toMatchObject({ kind: "mention", title: "lead mentioned you in Mentions", body: "Task task-1: Check with @Vic" });
    expect(await titles(rt, owner)).toEqual([]);
    expect(await titles(rt, member)).toHaveLength(1);
  });
});
