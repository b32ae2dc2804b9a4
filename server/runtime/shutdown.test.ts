import { describe, expect } from "vitest";
import { inTx } from "../db/client";
import { ActivityHub } from "../live/activity";
import { ScriptedModel } from "../models/scripted";
import { databaseTest } from "../testing/fixtures";
import { lockWaiters } from "../testing/locks";
import { newTestSession, TEST_CONFIG } from "../testing/runtime-harness";
import { Runtime } from "./runtime";

// A graceful stop leaves no lease held, whatever was under way: here an adoption whose lease
// is being taken when stop() runs (on Ctrl-C, mail arriving for an inactive teammate wakes it
// just then). The window is held open by a row lock on the session, so the order is fixed.

const it = databaseTest();

describe("stopping the runtime", () => {
  it("gives back a lease an adoption took while stop() ran, and stop() waits for it", async ({ db, tdb }) => {
    const hub = new ActivityHub(tdb);
    await hub.start();
    const id = await newTestSession(db);
    // Input for an agent nobody drives (written directly: no hint reaches any runtime).
    await db.inboxItem.create({ data: { sessionId: id, id: "waiting", mode: "queue", text: "Hello", source: { kind: "human" } } });
    // Not started: no sweep adopts the agent; only the wake below does.
    const runtime = new Runtime({ db, hub, config: TEST_CONFIG, resolveModel: () => new ScriptedModel({ delayMs: 0 }), log: () => undefined });

    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const holding = new Promise<void>((r) => (locked = r));
    const holder = inTx(db, async (tx) => {
      await tx.$queryRaw`SELECT id FROM sessions WHERE id = ${id} FOR UPDATE`;
      locked();
      await held;
    });
    await holding;

    const waking = runtime.wake(id);
    await expect.poll(() => lockWaiters(db)).toBe(1);
    let stopped = false;
    const stopping = runtime.stop().then(() => (stopped = true));
    // The adoption is still taking its lease: stop() has not returned.
    await Promise.resolve();
    expect(stopped).toBe(false);
    release();
    await Promise.all([holder, waking, stopping]);

    const row = await db.session.findUniqueOrThrow({ where: { id }, select: { leaseOwner: true, leaseToken: true } });
    expect(row.leaseOwner).toBeNull();
    // The lease was taken (the fencing token moved) and given back, not skipped.
    expect(row.leaseToken).toBeGreaterThan(0);
    expect(runtime.residentIds()).toEqual([]);
    await hub.close();
  });
});
