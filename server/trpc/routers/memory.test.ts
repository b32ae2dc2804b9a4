import { describe, expect } from "vitest";
import { inTx } from "../../db/client";
import { isAppError } from "../../errors";
import { asSessionId } from "../../ids";
import { proposeMemory, searchMemories } from "../../memory/store";
import { callerTest } from "../../testing/app-tests";
import { createTestPerson } from "../../testing/people";
import { createCaller } from "../root";

// The memory API in-process: an agent's proposal is reviewed by people (edit then approve, the
// first decision wins), edits keep versions, a deletion is in the audit log with its text, and
// the owner's settings make proposals approved as they come. Access per role is in
// access.test.ts; bad input in fuzz.test.ts.

const it = callerTest({}, "Olive Memory");

async function codeOf(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => "ok",
    (e: unknown) => (isAppError(e) ? e.code : isAppError((e as { cause?: unknown }).cause) ? (e as { cause: { code: string } }).cause.code : String(e)),
  );
}

describe("memory router", () => {
  it("reviews a proposal: edit then approve, once; versions, deletion audited; settings auto-approve", async ({ ctx, trpc, rt }) => {
    const teamId = (await trpc.session.create({ title: "Memory team" })).id;
    const max = await createTestPerson(rt.db, "Max Member");
    await rt.db.teamPerson.create({ data: { teamId, userId: max.id, role: "member" } });
    const asMax = createCaller({ ...ctx, person: max });
    const propose = (text: string, callKey: string) =>
      inTx(rt.db, (tx) => proposeMemory(tx, { teamId, text, tags: ["ops"], by: { kind: "member", name: "lead", sessionId: teamId, seq: 3 }, callKey }));

    const { memory } = await propose("Backups run at 02:00 UTC.", "msg_a/call_1");
    expect(await trpc.memory.list({ teamId, status: "proposed" })).toMatchObject([{ id: memory.id, text: "Backups run at 02:00 UTC.", proposedBy: { seq: 3 } }]);

    const decided = await asMax.memory.decide({ teamId, memoryId: memory.id, approve: true, edit: { text: "Backups run at 02:00 UTC, nightly.", tags: ["ops", "Backups"] } });
    expect(decided).toMatchObject({ status: "approved", version: 2, tags: ["ops", "backups"], decidedBy: { id: max.id, name: "Max Member" } });
    expect(await codeOf(trpc.memory.decide({ teamId, memoryId: memory.id, approve: false, note: "late" }))).toBe("MEMORY_CONFLICT");
    await trpc.memory.edit({ teamId, memoryId: memory.id, text: "Backups run nightly at 02:00 UTC.", tags: ["ops"] });
    expect((await trpc.memory.versions({ teamId, memoryId: memory.id })).map((v) => [v.version, v.editedBy.name])).toEqual([
      [2, "Olive Memory"],
      [1, "Max Member"],
    ]);
    expect(await trpc.memory.list({ teamId, status: "approved" })).toMatchObject([{ text: "Backups run nightly at 02:00 UTC.", version: 3 }]);

    await asMax.memory.delete({ teamId, memoryId: memory.id });
    expect(await trpc.memory.list({ teamId, status: "approved" })).toEqual([]);
    const audit = await trpc.audit.list({ kind: "memory_deleted" });
    expect(audit.entries).toMatchObject([{ actorName: "Max Member", detail: { memoryId: memory.id, text: "Backups run nightly at 02:00 UTC." } }]);
    expect(await codeOf(asMax.memory.delete({ teamId, memoryId: memory.id }))).toBe("MEMORY_NOT_FOUND");

    expect(await trpc.memory.settings({ teamId })).toEqual({ autoApprove: false, shared: false, contextTokens: 500 });
    // A change of one setting leaves the others; out of range is refused and changes nothing.
    await trpc.memory.setSettings({ teamId, contextTokens: 1000 });
    await expect(trpc.memory.setSettings({ teamId, contextTokens: 4001 })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(await trpc.memory.settings({ teamId })).toEqual({ autoApprove: false, shared: false, contextTokens: 1000 });
    expect(await codeOf(asMax.memory.setSettings({ teamId, autoApprove: true, shared: false }))).toBe("FORBIDDEN");
    await trpc.memory.setSettings({ teamId, autoApprove: true, shared: false });
    const auto = await propose("Deploy freezes start on the 20th of December.", "msg_b/call_1");
    expect(auto.memory.status).toBe("approved");
    expect(await trpc.memory.list({ teamId: asSessionId(teamId), status: "proposed" })).toEqual([]);
  });

  it("shares an approved memory with every team that opts in: once per version, curated by the instance's owner, audited", async ({ ctx, trpc, rt }) => {
    await rt.db.user.update({ where: { id: ctx.person!.id }, data: { instanceOwner: true } });
    const asOwner = createCaller({ ...ctx, person: { ...ctx.person!, instanceOwner: true } });
    const source = (await trpc.session.create({ title: "Learns" })).id;
    const reader = (await trpc.session.create({ title: "Reads shared" })).id;
    const { memory } = await inTx(rt.db, (tx) =>
      proposeMemory(tx, { teamId: source, text: "Invoices go out on the 1st.", tags: ["billing"], by: { kind: "member", name: "lead", sessionId: source, seq: 7 } }),
    );
    expect(await codeOf(asOwner.memory.share({ teamId: source, memoryId: memory.id }))).toBe("MEMORY_CONFLICT"); // not approved yet
    await trpc.memory.decide({ teamId: source, memoryId: memory.id, approve: true });
    expect(await codeOf(trpc.memory.share({ teamId: source, memoryId: memory.id }))).toBe("FORBIDDEN"); // not the instance's owner

    const shared = await asOwner.memory.share({ teamId: source, memoryId: memory.id });
    expect(shared).toMatchObject({ teamId: null, text: "Invoices go out on the 1st.", status: "approved", proposedBy: { kind: "member", name: "lead", sessionId: source, seq: 7, teamId: source }, decidedBy: { name: "Olive Memory" } });
    expect((await asOwner.memory.share({ teamId: source, memoryId: memory.id })).id).toBe(shared.id);
    expect((await trpc.memory.sharedList()).map((m) => m.id)).toEqual([shared.id]);

    // Another team's agents find it once that team reads the shared memory.
    const found = () => searchMemories(rt.db.sql, { teamId: reader, query: "invoices" });
    expect(await found()).toEqual([]);
    await trpc.memory.setSettings({ teamId: reader, autoApprove: false, shared: true });
    expect((await found()).map((h) => h.memory.id)).toEqual([shared.id]);

    await asOwner.memory.sharedEdit({ memoryId: shared.id, text: "Invoices go out on the 1st, by noon.", tags: ["billing"] });
    await asOwner.memory.sharedDelete({ memoryId: shared.id });
    expect(await found()).toEqual([]);
    const audit = await asOwner.audit.list({});
    const about = (e: (typeof audit.entries)[number]) => [shared.id, memory.id].includes(String((e.detail as { memoryId?: string }).memoryId)) && e.kind !== "memory_decided";
    expect(audit.entries.filter(about).map((e) => e.kind)).toEqual([
      "memory_deleted",
      "memory_edited",
      "memory_shared",
    ]);
    expect(await codeOf(asOwner.memory.share({ teamId: source, memoryId: memory.id }))).toBe("MEMORY_CONFLICT"); // its copy was deleted
  });
});
