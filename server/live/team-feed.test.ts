import { describe, expect, test } from "vitest";
import { databaseTest } from "../testing/fixtures";
import { newTestSession, waitFor } from "../testing/runtime-harness";
import { createTask } from "../team/task-board";
import { leadOf } from "../members/membership";
import { ActivityHub } from "./activity";
import { applyListDelta, applyTeamMessage } from "../../shared/team-delta";
import { TeamFeeds, type FeedCursor } from "./team-feed";
import { TrackedRows } from "./tracked-values";
import { inTx } from "../db/client";
import { proposeMemory } from "../memory/store";

// The team feed's shared reader against a real database, and its wire format's two halves
// (what the server diffs, what the browser applies) checked against each other.

/** A small deterministic generator, so a failing case can be replayed. */
function random(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s % n;
  };
}

describe("list deltas", () => {
  test("applied to what a feed had, give the list the server has, through any run of edits", () => {
    for (let seed = 1; seed <= 50; seed++) {
      const pick = random(seed);
      const rows = new TrackedRows<{ id: string; v: number }>();
      let server: { id: string; v: number }[] = [];
      let client: { id: string; v: number }[] = [];
      let sent = 0;
      let nextId = 0;
      for (let seq = 1; seq <= 40; seq++) {
        // Add, change, remove or move a few rows.
        const next = server.map((r) => ({ ...r }));
        for (let k = pick(3); k >= 0; k--) {
          const op = pick(4);
          if (op === 0 || next.length === 0) next.splice(pick(next.length + 1), 0, { id: `r${nextId++}`, v: 0 });
          else if (op === 1) next[pick(next.length)]!.v += 1;
          else if (op === 2) next.splice(pick(next.length), 1);
          else next.push(...next.splice(pick(next.length), 1));
        }
        server = next;
        rows.set(server, seq);
        // The feed catches up now and then, as a slow subscriber would.
        if (pick(3) === 0 || seq === 40) {
          const delta = rows.since(sent);
          if (delta) client = applyListDelta(client, delta);
          sent = seq;
        }
      }
      expect(client).toEqual(server);
      expect(rows.values()).toEqual(server);
    }
  });

  test("carry only the changed rows, and the order only when it changed", () => {
    const rows = new TrackedRows<{ id: string; v: number }>();
    rows.set([{ id: "a", v: 1 }, { id: "b", v: 1 }], 1);
    rows.set([{ id: "a", v: 2 }, { id: "b", v: 1 }], 2);
    expect(rows.since(1)).toEqual({ upsert: [{ id: "a", v: 2 }] });
    rows.set([{ id: "c", v: 1 }, { id: "a", v: 2 }, { id: "b", v: 1 }], 3);
    expect(rows.since(2)).toEqual({ upsert: [{ id: "c", v: 1 }], order: ["c", "a", "b"] });
    expect(rows.since(3)).toBeNull();
  });
});

const it = databaseTest().extend("hub", { scope: "file" }, async ({ tdb }, { onCleanup }) => {
  const hub = new ActivityHub(tdb);
  await hub.start();
  onCleanup(() => hub.close());
  return hub;
});

describe("the shared team feed", () => {
  it("reads each change once for all of a team's feeds, and only the sections it can touch", async ({ db, hub }) => {
    const feeds = new TeamFeeds(db, hub);
    const team = await newTestSession(db);
    const a = feeds.acquire(team);
    const b = feeds.acquire(team);
    expect(b).toBe(a);
    try {
      await a.ready;
      const start: FeedCursor = { seq: null, role: null };
      const first = a.next(start, "owner")!;
      expect(first.message.type).toBe("state");

      // Steps' spend re-reads the roster alone, once for every step within a second.
      const reads = a.reads;
      for (let i = 0; i < 3; i++) hub.emit({ sessionId: team, kind: "spend" });
      await waitFor(() => a.reads > reads, 5_000, "the roster read");
      expect(a.reads).toBe(reads + 1);

      // An agent's board change reaches both feeds from one read round, as a patch with the new
      // task: the board alone is read (a person's change also notifies `actions`).
      const changed = a.changed();
      const lead = leadOf(team);
      const beforeBoard = a.reads;
      await createTask(db, lead, { subject: "Write the report", description: "" });
      await changed;
      expect(a.reads).toBe(beforeBoard + 1);
      const patch = a.next(first.cursor, "owner")!;
      expect(patch.message.type).toBe("patch");
      if (patch.message.type !== "patch") return;
      expect(patch.message.patch.tasks?.upsert.map((t) => t.subject)).toEqual(["Write the report"]);
      expect(patch.message.patch.people).toBeUndefined();
      const applied = applyTeamMessage(first.message.type === "state" ? first.message.state : null, patch.message)!;
      expect(applied.tasks.map((t) => t.subject)).toEqual(["Write the report"]);
      expect(b.next(patch.cursor, "owner")).toBeNull();

      // A mailbox change re-reads the mailbox alone.
      const beforeMail = a.reads;
      hub.emit({ sessionId: team, kind: "mail" });
      await waitFor(() => a.reads > beforeMail, 5_000, "the mailbox read");
      expect(a.reads).toBe(beforeMail + 1);

      // A person's action re-reads the recent actions alone.
      const beforeActions = a.reads;
      hub.emit({ sessionId: team, kind: "actions" });
      await waitFor(() => a.reads > beforeActions, 5_000, "the actions read");
      expect(a.reads).toBe(beforeActions + 1);

      // A memory proposal re-reads the memory summary alone: the Memory tab's count and refetch.
      const beforeMemory = a.changed();
      const atMemory = a.reads;
      const { memory } = await inTx(db, (tx) => proposeMemory(tx, { teamId: team, text: "Invoices go out on the 1st.", tags: [], by: { kind: "member", name: "lead", sessionId: team, seq: null } }));
      await beforeMemory;
      expect(a.reads).toBe(atMemory + 1);
      const memoryPatch = a.next(patch.cursor, "owner")!;
      expect(memoryPatch.message).toMatchObject({ type: "patch", patch: { memory: { proposed: 1, approved: 0, lastChange: memory.updatedAt.getTime() } } });

      // A viewer's feed gets the people without emails; a role change resends people and role.
      const asViewer = a.next({ seq: patch.cursor.seq, role: "owner" }, "viewer")!;
      expect(asViewer.message).toMatchObject({ type: "patch", patch: { myRole: "viewer" } });
      if (asViewer.message.type === "patch") expect(asViewer.message.patch.people?.every((p) => p.email === null)).toBe(true);
    } finally {
      feeds.release(a, 0);
      feeds.release(b, 0);
    }
    expect(feeds.watched()).toEqual([]);
  });

  it("resumes an id of its own with the changes since, and answers any other id with the whole state", async ({ db, hub }) => {
    const feeds = new TeamFeeds(db, hub);
    const team = await newTestSession(db);
    const tail = feeds.acquire(team);
    try {
      await tail.ready;
      const first = tail.next({ seq: null, role: null }, "owner")!;
      // Resumed at the newest id: nothing to send.
      expect(tail.next(tail.cursorOf(first.id), "owner")).toBeNull();
      for (const other of ["elsewhere.1", `${first.id.split(".")[0]}.999`, "garbage", null]) {
        expect(tail.cursorOf(other).seq).toBeNull();
      }
      const changed = tail.changed();
      await createTask(db, leadOf(team), { subject: "Later", description: "" });
      await changed;
      const resumed = tail.next(tail.cursorOf(first.id), "owner")!;
      expect(resumed.message.type).toBe("patch");
      expect(resumed.id).not.toBe(first.id);
    } finally {
      feeds.release(tail, 0);
    }
  });
});
