import { TRPCError, type TrackedEnvelope } from "@trpc/server";
import { describe, expect } from "vitest";
import { credentialsKey, notifyActivity } from "../db/notify";
import { activityWaiter, ActivityHub } from "../live/activity";
import { databaseTest } from "../testing/fixtures";
import type { FeedReader } from "../live/feed-readers";
import { liveFeed } from "./live-feed";

// The loop every live feed runs, against a real hub (LISTEN/NOTIFY on a test database) and a
// log kept in memory: a reconnect with the last id resumes after it, and a credential that ends
// ends the feed at once, by its push rather than the periodic check (which is set far away).

const it = databaseTest().extend("hub", { scope: "file" }, async ({ tdb }, { onCleanup }) => {
  const hub = new ActivityHub(tdb);
  await hub.start();
  onCleanup(() => hub.close());
  return hub;
});

const LOG_KEY = "test-log";
const NEVER_MS = 600_000;

/** A feed of `log` (each entry's id is its position), woken by activity on LOG_KEY. */
function logFeed(hub: ActivityHub, log: string[], opts: { lastEventId: string | null; allowed: () => boolean; closed?: () => void }) {
  const reads: number[] = [];
  const open = (): FeedReader<number, void, string> => ({
    start: async () => Number(opts.lastEventId ?? 0),
    wake: () => activityWaiter(hub, LOG_KEY, ["event"]),
    async read(after) {
      reads.push(after);
      const fresh = log.slice(after);
      return { messages: fresh.map((data, i) => ({ id: String(after + i + 1), data })), cursor: log.length };
    },
    close: opts.closed,
  });
  const access = async () => {
    if (!opts.allowed()) throw new TRPCError({ code: "UNAUTHORIZED", message: "Signed out" });
  };
  const abort = new AbortController();
  const feed = liveFeed({ hub, person: { id: "person-1" } }, { teamId: null, access, open, signal: abort.signal, recheckMs: NEVER_MS });
  return { feed, reads, abort };
}

const take = async (feed: AsyncGenerator<TrackedEnvelope<string>>, n: number) => {
  const out: [string, string][] = [];
  while (out.length < n) {
    const next = await feed.next();
    if (next.done) throw new Error("the feed ended");
    out.push([next.value[0], next.value[1]]);
  }
  return out;
};

describe("the live feed loop", () => {
  it("resumes after the last id a reconnect sends: no gap, no duplicate; each read starts at its cursor", async ({ db, hub }) => {
    const log = ["a", "b", "c"];
    let closed = 0;
    const first = logFeed(hub, log, { lastEventId: null, allowed: () => true, closed: () => (closed += 1) });
    expect(await take(first.feed, 3)).toEqual([["1", "a"], ["2", "b"], ["3", "c"]]);
    // The connection drops after the client saw "b"; meanwhile two more entries commit.
    await first.feed.return(undefined);
    expect(closed).toBe(1);
    log.push("d", "e");
    const again = logFeed(hub, log, { lastEventId: "2", allowed: () => true });
    expect(await take(again.feed, 3)).toEqual([["3", "c"], ["4", "d"], ["5", "e"]]);
    // A change wakes it, and the read costs only what followed.
    const next = again.feed.next();
    log.push("f");
    await notifyActivity(db.sql, LOG_KEY, "event");
    expect((await next).value?.slice(0, 2)).toEqual(["6", "f"]);
    expect(again.reads).toEqual([2, 5]);
    again.abort.abort();
    expect((await again.feed.next()).done).toBe(true);
  });

  it("ends with the access check's error when a credential of the person ends mid-feed", async ({ db, hub }) => {
    let allowed = true;
    let closed = 0;
    const { feed } = logFeed(hub, ["a"], { lastEventId: null, allowed: () => allowed, closed: () => (closed += 1) });
    expect(await take(feed, 1)).toEqual([["1", "a"]]);
    // The expectation holds the promise before the notify: the feed can end while the notifying
    // query still waits for its reply, and a rejection with no handler yet is reported unhandled.
    const ended = expect(feed.next()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    allowed = false;
    await notifyActivity(db.sql, credentialsKey("person-1"), "credentials");
    await ended;
    expect(closed).toBe(1);
  });

  it("refuses before its first message when access is already gone", async ({ hub }) => {
    const { feed, reads } = logFeed(hub, ["a"], { lastEventId: null, allowed: () => false });
    await expect(feed.next()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    expect(reads).toEqual([]);
  });
});
