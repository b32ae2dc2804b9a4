import { describe, expect } from "vitest";
import type { Db } from "../db/client";
import { Prisma } from "../db/generated/client";
import { newTurnId, type SessionId } from "../ids";
import { databaseTest } from "../testing/fixtures";
import { newTestSession } from "../testing/runtime-harness";
import { claimCtes, enqueue } from "./inbox";
import { listInbox } from "../testing/inbox";
import { appendEvents, appendStatement, leaseLockStatement, readEventsAfter, type Lease } from "./session-log";

// The claim inside an append (claimCtes + appendStatement's `claim`), as the driver's step start
// sends it: the lease's lock, then the claim and the append in one statement, in one implicit
// transaction. What it claims enters the history exactly once, or stays in the inbox.

const it = databaseTest();

const LEASE: Lease = { owner: "test-driver", token: 7 };

async function leasedSession(db: Db): Promise<SessionId> {
  const id = await newTestSession(db);
  await db.$executeRaw`UPDATE sessions SET lease_owner = ${LEASE.owner}, lease_token = ${LEASE.token},
      lease_expires_at = now() + interval '1 minute' WHERE id = ${id}`;
  return id;
}

/** A turn's start as the driver sends it, under `lease`: what the lock read and what was appended. */
async function startTurn(db: Db, id: SessionId, lease: Lease, opts: { firstStep?: boolean; unlessAbortRequested?: boolean } = {}) {
  const turnId = newTurnId();
  const firstStep = opts.firstStep ?? true;
  const lock = leaseLockStatement(id, lease);
  const append = appendStatement(
    id,
    [{ kind: "turn_start", turnId }, { kind: "step_start", turnId, step: 0 }, { kind: "user_message", messageId: `ctx-${turnId}`, text: "context", source: { kind: "runtime_context" } }],
    lease,
    undefined,
    { set: Prisma.sql`active_turn_id = ${turnId}` },
    { ctes: claimCtes(id, { firstStep, unlessAbortRequested: opts.unlessAbortRequested }, lease), at: 2, required: firstStep },
  );
  const [locked, appended] = await db.sql.batch([lock.sql, append.sql]);
  return { locked: locked!.rows, events: append.read(appended!.rows) };
}

describe("a claim inside an append", () => {
  it("appends the claimed items as user messages between the first payloads and the rest, in inbox order", async ({ db }) => {
    const id = await leasedSession(db);
    const steer = await enqueue(db.sql, id, { mode: "steer", text: "steer first", source: { kind: "system" } });
    const first = await enqueue(db.sql, id, { mode: "queue", text: "prompt one", source: { kind: "human" } });
    const second = await enqueue(db.sql, id, { mode: "queue", text: "prompt two", source: { kind: "human" } });

    const { events } = await startTurn(db, id, LEASE);
    // All steer items and one queued prompt at a turn's first step; the rest stays queued.
    expect(events.map((e) => [e.seq, e.payload.kind, "text" in e.payload ? e.payload.text : null])).toEqual([
      [1, "turn_start", null],
      [2, "step_start", null],
      [3, "user_message", "steer first"],
      [4, "user_message", "prompt one"],
      [5, "user_message", "context"],
    ]);
    expect(events[2]!.payload).toEqual({ kind: "user_message", messageId: steer.id, text: "steer first", source: { kind: "system" } });
    expect(events[3]!.payload).toEqual({ kind: "user_message", messageId: first.id, text: "prompt one", source: { kind: "human" } });
    expect(await readEventsAfter(db.sql, id, 0)).toEqual(events.map((e) => ({ ...e, createdAt: expect.any(Date) })));
    expect((await listInbox(db, id)).map((i) => i.id)).toEqual([second.id]);
  });

  it("drops an item whose id is already in the history, and starts no turn when nothing else was claimed", async ({ db }) => {
    const id = await leasedSession(db);
    const item = await enqueue(db.sql, id, { mode: "queue", text: "already taken", source: { kind: "human" } });
    await appendEvents(db.sql, id, [{ kind: "user_message", messageId: item.id, text: "already taken", source: { kind: "human" } }], LEASE);

    const { events } = await startTurn(db, id, LEASE);
    expect(events).toEqual([]);
    expect(await listInbox(db, id)).toEqual([]);
    expect((await readEventsAfter(db.sql, id, 0)).map((e) => e.payload.kind)).toEqual(["user_message"]);
    expect((await db.session.findUniqueOrThrow({ where: { id } })).activeTurnId).toBeNull();
  });

  it("under a lease that is no longer held, claims nothing and appends nothing", async ({ db }) => {
    const id = await leasedSession(db);
    const item = await enqueue(db.sql, id, { mode: "queue", text: "keep me", source: { kind: "human" } });

    const { locked, events } = await startTurn(db, id, { ...LEASE, token: LEASE.token - 1 });
    expect(locked).toEqual([]);
    expect(events).toEqual([]);
    expect((await listInbox(db, id)).map((i) => i.id)).toEqual([item.id]);
    expect(await readEventsAfter(db.sql, id, 0)).toEqual([]);
  });

  it("at a later step, claims nothing while a stop or interrupt request is stored", async ({ db }) => {
    const id = await leasedSession(db);
    const item = await enqueue(db.sql, id, { mode: "steer", text: "wait for me", source: { kind: "system" } });
    await db.$executeRaw`UPDATE sessions SET abort_request = 'interrupt' WHERE id = ${id}`;

    await startTurn(db, id, LEASE, { firstStep: false, unlessAbortRequested: true });
    expect((await listInbox(db, id)).map((i) => i.id)).toEqual([item.id]);
    expect((await readEventsAfter(db.sql, id, 0)).some((e) => e.payload.kind === "user_message" && e.payload.messageId === item.id)).toBe(false);
  });
});
