import { describe, expect } from "vitest";
import { inTx } from "../db/client";
import { listNotifications, setNotificationSettings } from "../people/notifications";
import type { Person } from "../people/person";
import { dispatchTeamEvents } from "../team/dispatch";
import { runtimeTest } from "../testing/fixtures";
import { createTestPerson } from "../testing/people";
import { newTestSession, waitFor, type TestRuntime } from "../testing/runtime-harness";
import { decideTeamMemory, setMemorySettings } from "./review";
import { proposeMemory } from "./store";

// A memory proposal reaches the inboxes of the team's people who may decide it (members and
// owners, not viewers), once, unless muted; it waits there until someone decides it, and a team
// that approves as proposals come notifies nobody.

const it = runtimeTest({ team: true });

async function team(rt: TestRuntime, title: string) {
  const owner = await createTestPerson(rt.db, `Olive ${title}`);
  const member = await createTestPerson(rt.db, `Max ${title}`);
  const viewer = await createTestPerson(rt.db, `Vic ${title}`);
  const lead = await newTestSession(rt.db, title, owner);
  await rt.db.teamPerson.createMany({ data: [{ teamId: lead, userId: member.id, role: "member" }, { teamId: lead, userId: viewer.id, role: "viewer" }] });
  return { lead, owner, member, viewer };
}

const memoryNotes = async (rt: TestRuntime, p: Person) => (await listNotifications(rt.db.sql, p.id)).items.filter((n) => n.kind === "memory.proposed");

async function propose(rt: TestRuntime, teamId: string, text: string) {
  const { memory } = await inTx(rt.db, (tx) => proposeMemory(tx, { teamId, text, tags: [], by: { kind: "member", name: "researcher", sessionId: teamId, seq: null } }));
  // This process's dispatcher may have taken the event first: wait until it is fanned out.
  await waitFor(async () => {
    await dispatchTeamEvents(rt.db);
    return (await rt.db.teamEvent.count({ where: { dispatchedAt: null } })) === 0;
  }, 10_000, "the proposal fanned out");
  return memory;
}

describe("memory notifications", () => {
  it("reach members and owners, not viewers, and stop waiting once decided", async ({ rt }) => {
    const { lead, owner, member, viewer } = await team(rt, "Remembers");
    const m = await propose(rt, lead, "Invoices go out on the 1st.");
    for (const p of [owner, member]) {
      expect(await memoryNotes(rt, p)).toEqual([
        expect.objectContaining({ title: "researcher proposes a memory for Remembers", body: "Invoices go out on the 1st.", memoryId: m.id, pending: true }),
      ]);
    }
    expect(await memoryNotes(rt, viewer)).toEqual([]);
    await decideTeamMemory(rt.db, { person: member, teamId: lead }, m.id, { approve: true });
    expect((await memoryNotes(rt, owner)).map((n) => n.pending)).toEqual([false]);
  });

  it("are not sent to who muted them, nor when the team approves as proposals come", async ({ rt }) => {
    const { lead, owner, member } = await team(rt, "Quiet");
    await setNotificationSettings(rt.db, member.id, { muted: ["memory.proposed"] });
    await propose(rt, lead, "Deploys happen on Tuesdays.");
    expect(await memoryNotes(rt, owner)).toHaveLength(1);
    expect(await memoryNotes(rt, member)).toEqual([]);
    await setMemorySettings(rt.db, { person: owner, teamId: lead }, { autoApprove: true, shared: false });
    await propose(rt, lead, "Releases are tagged vX.Y.Z.");
    expect(await memoryNotes(rt, owner)).toHaveLength(1);
  });
});
