import { describe, expect } from "vitest";
import { inTx, type Db } from "../db/client";
import type { SessionId } from "../ids";
import { enqueue } from "../runtime/inbox";
import type { EventPayload, SessionEvent } from "../runtime/events";
import { appendEvents, readEventsAfter } from "../runtime/session-log";
import { databaseTest } from "../testing/fixtures";
import { newTestSession, waitFor } from "../testing/runtime-harness";
import { ActivityHub } from "./activity";
import { SessionFeeds } from "./session-feed";

// The shared reader of a session's live feeds, against a real database and LISTEN/NOTIFY. Its
// read counters say when it read rows: published events take none, hints it already holds
// take none, gaps and newer seqs are read by seq.

const it = databaseTest().extend("hub", { scope: "file" }, async ({ tdb }, { onCleanup }) => {
  const hub = new ActivityHub(tdb);
  await hub.start();
  onCleanup(() => hub.close());
  return hub;
});

const delta = (i: number): EventPayload => ({ kind: "assistant_delta", turnId: "t1", step: 0, text: `chunk ${i} ` });

function append(db: Db, id: SessionId, payloads: EventPayload[]): Promise<SessionEvent[]> {
  return inTx(db, (tx) => appendEvents(tx, id, payloads, null));
}

describe("the shared session feed", () => {
  it("is one tail per watched session, shared by its feeds and dropped with the last", async ({ db, hub }) => {
    const feeds = new SessionFeeds(db, hub);
    const id = await newTestSession(db);
    const a = feeds.acquire(id);
    const b = feeds.acquire(id);
    expect(b).toBe(a);
    await a.ready;
    expect(a.reads).toEqual({ events: 1, state: 1 });
    expect(feeds.watched()).toEqual([id]);
    feeds.release(a);
    expect(feeds.watched()).toEqual([id]);
    feeds.release(b);
    expect(feeds.watched()).toEqual([]);
    // A later feed gets a fresh tail.
    const c = feeds.acquire(id);
    expect(c).not.toBe(a);
    feeds.release(c);
  });

  it("keeps the newest events; a feed further back is told to read rows", async ({ db, hub }) => {
    const feeds = new SessionFeeds(db, hub);
    const id = await newTestSession(db);
    await append(db, id, Array.from({ length: 1_200 }, (_, i) => delta(i + 1)));
    const tail = feeds.acquire(id);
    try {
      await tail.ready;
      expect(tail.eventsAfter(0, 500)).toBeNull();
      expect(tail.eventsAfter(199, 500)).toBeNull();
      const page = tail.eventsAfter(200, 500)!;
      expect(page.map((e) => e.seq)).toEqual(Array.from({ length: 500 }, (_, i) => 201 + i));
      expect(tail.eventsAfter(1_150, 500)!.map((e) => e.seq)).toEqual(Array.from({ length: 50 }, (_, i) => 1_151 + i));
      expect(tail.eventsAfter(1_200, 500)).toEqual([]);
    } finally {
      feeds.release(tail);
    }
  });

  it("takes published events without a read, skips hints it holds, reads another process's append at once and a gap by seq", async ({ db, hub }) => {
    const feeds = new SessionFeeds(db, hub);
    const id = await newTestSession(db);
    const tail = feeds.acquire(id);
    try {
      await tail.ready;
      const before = tail.reads.events;

      // Committed and published by this process (as the runtime does): no read, and a
      // notification of the same seq (another writer's hint) is skipped too.
      const first = await append(db, id, [delta(1), delta(2)]);
      const changed = tail.changed();
      hub.emit({ sessionId: id, kind: "event", lastSeq: 2, events: first });
      await changed;
      expect(tail.eventsAfter(0, 500)).toEqual(first);
      hub.emit({ sessionId: id, kind: "event", lastSeq: 2 });
      // Publishes answered out of order (4 before 3): the gap's publish is waited for, not read.
      const third = await append(db, id, [delta(3)]);
      const fourth = await append(db, id, [delta(4)]);
      hub.emit({ sessionId: id, kind: "event", lastSeq: 4, events: fourth });
      hub.emit({ sessionId: id, kind: "event", lastSeq: 3, events: third });
      hub.emit({ sessionId: id, kind: "event", lastSeq: 4, events: fourth });
      expect(tail.eventsAfter(0, 500)?.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      // Past the publish grace (30 ms): still no read.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(tail.reads.events).toBe(before);

      // Another process's append is only notified: its read starts at once, not after a grace.
      await append(db, id, [delta(5)]);
      hub.emit({ sessionId: id, kind: "event", lastSeq: 5 });
      expect(tail.reads.events).toBe(before + 1);
      await waitFor(() => (tail.eventsAfter(4, 500)?.length === 1 ? true : null), 5_000, "the notified append");

      // Event 6 committed by someone else, event 7 published: the gap is read from rows.
      await append(db, id, [delta(6)]);
      const seventh = await append(db, id, [delta(7)]);
      hub.emit({ sessionId: id, kind: "event", lastSeq: 7, events: seventh });
      const caughtUp = await waitFor(() => (tail.eventsAfter(5, 500)?.length === 2 ? tail.eventsAfter(0, 500) : null), 5_000, "the gap read");
      expect(caughtUp.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(tail.reads.events).toBe(before + 2);
    } finally {
      feeds.release(tail);
    }
  });

  it("gets appended events as a later read returns them, object keys in the stored order", async ({ db }) => {
    const id = await newTestSession(db);
    const call = { toolCallId: "c1", toolName: "spawn_teammate", input: { name: "r", description: "d", context: "fresh", prompt: "p" } };
    const payload: EventPayload = { kind: "assistant_message", messageId: "m1", turnId: "t1", step: 0, model: "x", text: "", toolCalls: [call], usage: { inputTokens: 1, outputTokens: 2 }, interrupted: false };
    const appended = await append(db, id, [payload]);
    const [read] = await readEventsAfter(db, id, 0);
    // What the driver keeps and publishes is byte for byte what a reload or a resume reads.
    expect(JSON.stringify(appended[0]!.payload)).toBe(JSON.stringify(read!.payload));
  });

  it("re-reads the state on a state change, once for all of its feeds", async ({ db, hub }) => {
    const feeds = new SessionFeeds(db, hub);
    const id = await newTestSession(db);
    const a = feeds.acquire(id);
    const b = feeds.acquire(id);
    try {
      await a.ready;
      expect(a.state?.state.inbox).toEqual([]);
      const reads = a.reads.state;
      await inTx(db, (tx) => enqueue(tx, id, { mode: "queue", text: "hello", source: { kind: "human", name: "Ana" } }));
      await waitFor(() => a.state?.state.inbox.length === 1, 5_000, "the queued prompt in the state");
      expect(b.state?.state.inbox.map((i) => i.text)).toEqual(["hello"]);
      expect(a.reads.state).toBe(reads + 1);
    } finally {
      feeds.release(a);
      feeds.release(b);
    }
  });
});
