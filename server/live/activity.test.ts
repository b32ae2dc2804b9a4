import { describe, expect } from "vitest";
import type { Db } from "../db/client";
import { databaseTest } from "../testing/fixtures";
import { waitFor } from "../testing/runtime-harness";
import { notifyActivity } from "../db/notify";
import { ActivityHub, type Activity } from "./activity";

// The activity hub against a real database: what one process announces reaches its own
// listeners at once and other processes' hubs by NOTIFY, coalesced per session and kind, never
// back to itself. Each hub stands for a process.

/** `hub()` starts another hub; all close when the test ends. */
const it = databaseTest().extend("hub", async ({ tdb }, { onCleanup }) => {
  const hubs: ActivityHub[] = [];
  onCleanup(async () => void (await Promise.all(hubs.map((h) => h.close()))));
  return async () => {
    const hub = new ActivityHub(tdb);
    await hub.start();
    hubs.push(hub);
    return hub;
  };
});

/** Everything a hub hears about `sessionId`, in order (the reconnect poke as sessionId "*"). */
function record(hub: ActivityHub, sessionId: string): Activity[] {
  const heard: Activity[] = [];
  hub.on(sessionId, (a) => heard.push({ sessionId: a.sessionId, kind: a.kind, ...(a.lastSeq === undefined ? {} : { lastSeq: a.lastSeq }) }));
  return heard;
}

/**
 * A notification committed after everything before it, once heard by every one of `hubs`:
 * then each has heard every notification committed before it (Postgres delivers them in
 * commit order).
 */
async function barrier(db: Db, hubs: ActivityHub[]): Promise<void> {
  const marker = `barrier-${crypto.randomUUID()}`;
  const heard = hubs.map((hub) => new Promise<void>((resolve) => hub.on(marker, () => resolve())));
  await notifyActivity(db, marker, "state");
  await Promise.all(heard);
}

describe("the activity hub", () => {
  it("announces to its own listeners at once and to other processes by NOTIFY, not back to itself", async ({ db, hub }) => {
    const [a, b] = [await hub(), await hub()];
    const [onA, onB] = [record(a, "s1"), record(b, "s1")];

    a.announce({ sessionId: "s1", kind: "event", lastSeq: 3 });
    expect(onA).toEqual([{ sessionId: "s1", kind: "event", lastSeq: 3 }]);
    await waitFor(() => onB.length > 0, 5_000, "the other process to hear it");

    await barrier(db, [a, b]);
    expect(onA).toHaveLength(1);
    expect(onB).toEqual([{ sessionId: "s1", kind: "event", lastSeq: 3 }]);
  });

  it("sends one notification per session and kind for what was announced meanwhile, with the newest seq", async ({ db, hub }) => {
    const [a, b] = [await hub(), await hub()];
    const [onS1, onS2] = [record(b, "s1"), record(b, "s2")];

    for (let seq = 1; seq <= 50; seq++) a.announce({ sessionId: "s1", kind: "event", lastSeq: seq });
    a.announce({ sessionId: "s1", kind: "spend" });
    a.announce({ sessionId: "s2", kind: "event", lastSeq: 7 });
    a.announce({ sessionId: "s2", kind: "state" });
    a.announce({ sessionId: "s2", kind: "state" });
    await waitFor(() => onS1.some((x) => x.kind === "event") && onS2.length === 2, 5_000, "the announcements");

    await barrier(db, [b]);
    expect(onS1).toEqual(
      expect.arrayContaining([
        { sessionId: "s1", kind: "event", lastSeq: 50 },
        { sessionId: "s1", kind: "spend" },
      ]),
    );
    expect(onS1).toHaveLength(2);
    expect(onS2).toEqual(
      expect.arrayContaining([
        { sessionId: "s2", kind: "event", lastSeq: 7 },
        { sessionId: "s2", kind: "state" },
      ]),
    );
    expect(onS2).toHaveLength(2);
  });

  it("sends what is still to be sent when it closes", async ({ db, hub }) => {
    const [a, b] = [await hub(), await hub()];
    const onB = record(b, "s1");
    a.announce({ sessionId: "s1", kind: "event", lastSeq: 1 });
    a.announce({ sessionId: "s1", kind: "event", lastSeq: 2 });
    await a.close();
    await barrier(db, [b]);
    expect(onB).toEqual([{ sessionId: "s1", kind: "event", lastSeq: 2 }]);
  });

  it("keeps what it announces while its connection is down and sends it after the reconnect", async ({ db, hub }) => {
    const [a, b] = [await hub(), await hub()];
    const [onA, onB] = [record(a, "s1"), record(b, "s1")];
    a.announce({ sessionId: "s1", kind: "event", lastSeq: 1 });
    await waitFor(() => onB.length === 1, 5_000, "the first announcement");

    // The announcing hub's connection is the one whose last statement sent announcements.
    const killed = await db.$queryRaw<{ pid: number }[]>`SELECT pg_terminate_backend(pid), pid FROM pg_stat_activity
      WHERE datname = current_database() AND query LIKE 'SELECT pg_notify($1, p)%'`;
    expect(killed).toHaveLength(1);
    a.announce({ sessionId: "s1", kind: "event", lastSeq: 2 });

    await waitFor(() => onB.length === 2, 10_000, "the announcement after the reconnect");
    await barrier(db, [a, b]);
    expect(onB).toEqual([
      { sessionId: "s1", kind: "event", lastSeq: 1 },
      { sessionId: "s1", kind: "event", lastSeq: 2 },
    ]);
    // Its own listeners heard both at once, and the reconnect's poke (they re-read).
    expect(onA).toEqual([
      { sessionId: "s1", kind: "event", lastSeq: 1 },
      { sessionId: "s1", kind: "event", lastSeq: 2 },
      { sessionId: "*", kind: "state" },
    ]);
  });
});
