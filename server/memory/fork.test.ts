import { describe, expect } from "vitest";
import { inTx } from "../db/client";
import { asSessionId } from "../ids";
import { appendEvents } from "../runtime/session-log";
import { forkTeam } from "../team/person-actions";
import { databaseTest } from "../testing/fixtures";
import { newTestSession } from "../testing/runtime-harness";
import { decideMemory, deleteMemory, editMemory, listMemories, proposeMemory, searchMemories } from "./store";

// A forked team keeps its parent's team memory as of the fork point (SPEC.md §20): what was
// approved then, with the text it had then; what came later stays in the parent, and the copies
// still name the step in the parent that learned them.

const it = databaseTest();
const olive = { id: "usr_olive", name: "Olive" };

describe("a fork's memory", () => {
  it("is the parent's approved memory at the fork point, as it read then", async ({ db }) => {
    const parent = await newTestSession(db, "Parent");
    const by = { kind: "member" as const, name: "lead", sessionId: parent, seq: 4 };
    const approved = async (text: string) =>
      inTx(db, async (tx) => decideMemory(tx, parent, (await proposeMemory(tx, { teamId: parent, text, tags: ["kept"], by })).memory.id, olive, { approve: true }));
    const edited = await approved("Invoices go out on the 1st.");
    const deleted = await approved("Deploys happen on Tuesdays.");
    await inTx(db, (tx) => proposeMemory(tx, { teamId: parent, text: "Still waiting at the fork.", tags: [], by }));
    const turn = (n: number) => appendEvents(db, parent, [{ kind: "turn_start", turnId: `t${n}` }, { kind: "turn_end", turnId: `t${n}`, reason: "completed" }], null);
    await new Promise((r) => setTimeout(r, 5)); // the log's clock counts milliseconds: the turn ends after the decisions
    const [, end] = await turn(1);
    await new Promise((r) => setTimeout(r, 5)); // a later millisecond on the log's clock
    await inTx(db, (tx) => editMemory(tx, parent, edited.id, olive, { text: "Invoices go out on the 2nd.", tags: ["kept"] }));
    await inTx(db, (tx) => deleteMemory(tx, parent, deleted.id));
    await approved("Learned after the fork.");
    await turn(2);

    const fork = asSessionId((await forkTeam(db, parent, { throughSeq: end!.seq })).id);
    const copies = await listMemories(db.sql, fork, "approved");
    expect(copies.map((m) => m.text).sort()).toEqual(["Deploys happen on Tuesdays.", "Invoices go out on the 1st."]);
    expect(copies.every((m) => m.teamId === fork && m.decidedBy !== null && m.proposedBy.kind === "member" && m.proposedBy.teamId === parent && m.proposedBy.seq === 4)).toBe(true);
    expect(await listMemories(db.sql, fork, "proposed")).toEqual([]);
    expect((await db.team.findUniqueOrThrow({ where: { id: fork } })).memoriesApproved).toBe(2);
    expect((await searchMemories(db.sql, { teamId: fork, query: "invoices" })).map((h) => h.memory.text)).toEqual(["Invoices go out on the 1st."]);
    // The parent is untouched.
    expect((await listMemories(db.sql, parent, "approved")).map((m) => m.text).sort()).toEqual(["Invoices go out on the 2nd.", "Learned after the fork."]);
  });
});
