import { describe, expect } from "vitest";
import { inTx } from "../../db/client";
import { isAppError } from "../../errors";
import { asSessionId } from "../../ids";
import { proposeMemory } from "../../memory/store";
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

    expect(await trpc.memory.settings({ teamId })).toEqual({ autoApprove: false, shared: false });
    expect(await codeOf(asMax.memory.setSettings({ teamId, autoApprove: true, shared: false }))).toBe("FORBIDDEN");
    await trpc.memory.setSettings({ teamId, autoApprove: true, shared: false });
    const auto = await propose("Deploy freezes start on the 20th of December.", "msg_b/call_1");
    expect(auto.memory.status).toBe("approved");
    expect(await trpc.memory.list({ teamId: asSessionId(teamId), status: "proposed" })).toEqual([]);
  });
});
