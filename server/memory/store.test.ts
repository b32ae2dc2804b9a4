import { describe, expect } from "vitest";
import { inTx, type Db } from "../db/client";
import { isAppError } from "../errors";
import { newSessionId } from "../ids";
import { databaseTest } from "../testing/fixtures";
import { decideMemory, deleteMemory, editMemory, getMemory, listMemories, memoryVersions, proposeMemory, searchMemories, type Proposer } from "./store";

// Team memory's store against a real Postgres: a proposal waits for a person's decision (the
// first wins), the same tool call proposes once, edits keep versions, a replacement retires what
// it replaces, and search finds only approved memories the team may see, best first.

const it = databaseTest();

const olive = { id: "usr_olive", name: "Olive" };
const max = { id: "usr_max", name: "Max" };

async function team(db: Db, opts: { autoApprove?: boolean; shared?: boolean } = {}): Promise<string> {
  const id = newSessionId();
  await db.$executeRaw`INSERT INTO teams (id, memory_auto_approve, memory_shared) VALUES (${id}, ${opts.autoApprove ?? false}, ${opts.shared ?? false})`;
  return id;
}

const researcher = (seq = 7): Proposer => ({ kind: "member", name: "researcher", sessionId: "ses_researcher", seq });

async function propose(db: Db, teamId: string | null, text: string, extra: { tags?: string[]; callKey?: string; replacesId?: string } = {}) {
  return inTx(db, (tx) => proposeMemory(tx, { teamId, text, tags: extra.tags ?? [], by: researcher(), callKey: extra.callKey, replacesId: extra.replacesId }));
}

const decide = (db: Db, ...a: Tail<Parameters<typeof decideMemory>>) => inTx(db, (tx) => decideMemory(tx, ...a));
const edit = (db: Db, ...a: Tail<Parameters<typeof editMemory>>) => inTx(db, (tx) => editMemory(tx, ...a));
type Tail<T extends unknown[]> = T extends [unknown, ...infer R] ? R : never;

async function conflictOf(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  if (!isAppError(e)) throw new Error(`expected an AppError, got ${String(e)}`);
  return e.code;
}

describe("memory store", () => {
  it("keeps each team's count of approved memories through approvals, replacements and deletions", async ({ db }) => {
    const t = await team(db);
    const approvedCount = async () => (await db.team.findUniqueOrThrow({ where: { id: t } })).memoriesApproved;
    const first = (await propose(db, t, "Standups are at 09:30.")).memory;
    expect(await approvedCount()).toBe(0);
    await decide(db, t, first.id, olive, { approve: true });
    expect(await approvedCount()).toBe(1);
    const second = (await propose(db, t, "Standups are at 10:00.", { replacesId: first.id })).memory;
    await decide(db, t, second.id, olive, { approve: true });
    expect(await approvedCount()).toBe(1);
    await inTx(db, (tx) => deleteMemory(tx, t, second.id));
    expect(await approvedCount()).toBe(0);
    const auto = await team(db, { autoApprove: true });
    await propose(db, auto, "Deploys on Tuesdays.");
    await propose(db, null, "Shared: the office closes at 18:00.");
    expect((await db.team.findUniqueOrThrow({ where: { id: auto } })).memoriesApproved).toBe(1);
  });

  it("a proposal waits for a person; the first decision wins and names who decided", async ({ db }) => {
    const t = await team(db);
    const { memory } = await propose(db, t, "The customer's fiscal year starts in April.", { tags: ["customer"] });
    expect(memory).toMatchObject({ status: "proposed", version: 1, decidedBy: null, proposedBy: researcher() });
    expect(await searchMemories(db, { teamId: t, query: "fiscal year" })).toEqual([]);

    const decisions = await Promise.allSettled([
      decide(db, t, memory.id, olive, { approve: true }),
      decide(db, t, memory.id, max, { approve: false, note: "Not sure" }),
    ]);
    const won = decisions.flatMap((d) => (d.status === "fulfilled" ? [d.value] : []));
    expect(won).toHaveLength(1);
    const lost = decisions.find((d) => d.status === "rejected");
    expect(isAppError(lost?.reason) && lost.reason.code).toBe("MEMORY_CONFLICT");
    // What the winner was told is what is stored: approved by Olive, or rejected by Max with his note.
    const now = await getMemory(db, t, memory.id);
    expect(now).toEqual(won[0]);
    expect([now.decidedBy, now.note]).toEqual(now.status === "approved" ? [olive, null] : [max, "Not sure"]);
    expect(now.decidedAt).toBeInstanceOf(Date);
  });

  it("the same tool call proposes once: proposed again, it returns its first memory", async ({ db }) => {
    const t = await team(db);
    const first = await propose(db, t, "Deploys happen on Tuesdays.", { callKey: "turn_1:call_1" });
    const again = await propose(db, t, "Deploys happen on Tuesdays.", { callKey: "turn_1:call_1" });
    expect(again).toEqual({ memory: first.memory, again: true });
    expect(first.again).toBe(false);
    expect(await listMemories(db, t, "proposed")).toHaveLength(1);
  });

  it("approved as edited, the proposed text is a version; an approved memory's edit is another", async ({ db }) => {
    const t = await team(db);
    const { memory } = await propose(db, t, "Use pnpm.");
    const approved = await decide(db, t, memory.id, olive, { approve: true, edit: { text: "Use npm, not pnpm.", tags: ["tooling"] } });
    expect(approved).toMatchObject({ status: "approved", text: "Use npm, not pnpm.", tags: ["tooling"], version: 2 });
    const edited = await edit(db, t, memory.id, max, { text: "Use npm ci in CI.", tags: ["tooling", "ci"] });
    expect(edited).toMatchObject({ text: "Use npm ci in CI.", version: 3 });
    expect((await memoryVersions(db, t, memory.id)).map((v) => [v.version, v.text, v.editedBy.name])).toEqual([
      [2, "Use npm, not pnpm.", "Max"],
      [1, "Use pnpm.", "Olive"],
    ]);
    // An edit goes with an approval; a decided memory is not decided again.
    expect(await conflictOf(decide(db, t, memory.id, olive, { approve: true }))).toBe("MEMORY_CONFLICT");
    const other = await propose(db, t, "Something");
    expect(await conflictOf(decide(db, t, other.memory.id, olive, { approve: false, edit: { text: "x", tags: [] } }))).toBe("INVALID_INPUT");
    expect(await conflictOf(edit(db, t, other.memory.id, olive, { text: "x", tags: [] }))).toBe("MEMORY_CONFLICT");
  });

  it("an approved replacement retires the memory it replaces; only an approved one can be replaced", async ({ db }) => {
    const t = await team(db);
    const old = await propose(db, t, "The API key rotates monthly.");
    await decide(db, t, old.memory.id, olive, { approve: true });
    const next = await propose(db, t, "The API key rotates weekly.", { replacesId: old.memory.id });
    expect((await getMemory(db, t, old.memory.id)).status).toBe("approved");
    await decide(db, t, next.memory.id, olive, { approve: true });
    expect((await getMemory(db, t, old.memory.id)).status).toBe("replaced");
    expect((await searchMemories(db, { teamId: t, query: "API key rotates" })).map((h) => h.memory.text)).toEqual(["The API key rotates weekly."]);
    expect(await conflictOf(propose(db, t, "Again", { replacesId: old.memory.id }))).toBe("MEMORY_CONFLICT");
  });

  it("a team's auto-approve setting approves as proposed", async ({ db }) => {
    const t = await team(db, { autoApprove: true });
    const { memory } = await propose(db, t, "Staging is at staging.example.com.");
    expect(memory).toMatchObject({ status: "approved", decidedBy: { auto: true } });
    expect(memory.decidedAt).toBeInstanceOf(Date);
  });

  it("search: approved memories of the team, and the instance's shared ones only when the team reads them; best first", async ({ db }) => {
    const reads = await team(db, { shared: true });
    const alone = await team(db);
    const approve = async (teamId: string | null, text: string, tags: string[] = []) => {
      const { memory } = await propose(db, teamId, text, { tags });
      return decide(db, teamId, memory.id, olive, { approve: true });
    };
    await approve(reads, "Invoices are sent on the first working day of the month.", ["billing"]);
    await approve(reads, "The billing service retries invoices twice; invoices that fail go to finance.", ["billing", "invoices"]);
    await approve(null, "Invoices over 10,000 EUR need a second signature.", ["billing"]);
    await approve(alone, "Invoices are printed.");
    await propose(db, reads, "Invoices are drafts until approved."); // a proposal: not found

    const hits = await searchMemories(db, { teamId: reads, query: "invoices" });
    expect(hits.map((h) => h.memory.text)).toEqual([
      "The billing service retries invoices twice; invoices that fail go to finance.",
      expect.any(String),
      expect.any(String),
    ]);
    expect(hits.map((h) => h.memory.teamId).sort()).toEqual([null, reads, reads].sort());
    expect(hits[0]!.rank).toBeGreaterThan(hits[2]!.rank);
    expect((await searchMemories(db, { teamId: alone, query: "invoices" })).map((h) => h.memory.text)).toEqual(["Invoices are printed."]);
    // Web-search syntax: a phrase, an exclusion; tags are searched too.
    expect((await searchMemories(db, { teamId: reads, query: '"second signature"' })).map((h) => h.memory.teamId)).toEqual([null]);
    expect(await searchMemories(db, { teamId: reads, query: "invoices -billing" })).toEqual([]);
    expect(await searchMemories(db, { teamId: reads, query: "" })).toEqual([]);
  });

  it("a deleted memory is gone from search, lists and reads; another team cannot reach a memory", async ({ db }) => {
    const t = await team(db);
    const other = await team(db);
    const { memory } = await propose(db, t, "Ops rota lives in the wiki.");
    await decide(db, t, memory.id, olive, { approve: true });
    expect(await conflictOf(getMemory(db, other, memory.id))).toBe("MEMORY_NOT_FOUND");
    expect(await conflictOf(decide(db, other, memory.id, olive, { approve: true }))).toBe("MEMORY_NOT_FOUND");
    await inTx(db, (tx) => deleteMemory(tx, t, memory.id));
    expect(await searchMemories(db, { teamId: t, query: "rota" })).toEqual([]);
    expect(await listMemories(db, t, "approved")).toEqual([]);
    expect(await conflictOf(getMemory(db, t, memory.id))).toBe("MEMORY_NOT_FOUND");
  });
});
