import pg from "pg";
import { afterEach, describe, expect } from "vitest";
import { createDb, directUrlOf, inTx, type Db } from "../db/client";
import { isAppError } from "../errors";
import { newMessageId, newTurnId, type SessionId } from "../ids";
import { ActivityHub } from "../live/activity";
import { RESUME_NOTICE } from "./config";
import { defaultPlaybook, ScriptedModel, type Playbook } from "../models/scripted";
import type { ModelRequest } from "../models/types";
import type { TestDatabase } from "../testing/db";
import { databaseTest } from "../testing/fixtures";
import { killRuntimeChildren, spawnRuntime } from "../testing/runtime-child";
import {
  eventsOf,
  newTestSession,
  startTestRuntime,
  TEST_CONFIG,
  turnEnds,
  waitFor,
  waitForTurns,
  type TestRuntime,
} from "../testing/runtime-harness";
import { builtinTools } from "./builtin-tools";
import type { PayloadOf, SessionEvent } from "./events";
import { enqueue } from "./inbox";
import { claimInbox, listInbox } from "../testing/inbox";
import { acquireLease, releaseLease, renewLeases } from "./lease";
import { appendEvents, type Lease } from "./session-log";
import { Runtime } from "./runtime";
import { getSession, promptSession } from "./sessions";

// Crash recovery and leases with real OS processes on a real Postgres: a runtime killed
// mid-turn, two runtimes on one database, fencing of a lost lease, idle eviction with cold
// resume, and graceful stop. Child runtimes are server/testing/runtime-process.ts.

const LOST_OR_CRASHED = /lease lost|crashed|left open by a crash|failed/i;
// Child processes start in seconds (tsx compiles on start) and the machine may be shared with
// other test runs: time limits are generous, and every wait is on a condition.
const TEST_TIMEOUT = 180_000;
const WAIT_MS = 60_000;

const it = databaseTest();
// The file's database and client (fixtures), bound once for the helpers below and the tests.
let tdb: TestDatabase;
let db: Db;
it.beforeAll(({ tdb: fileDb, db: fileClient }) => {
  tdb = fileDb;
  db = fileClient;
});

const inProcess = new Set<TestRuntime>();
afterEach(async () => {
  // Nothing a test started may keep driving sessions into the next test.
  await killRuntimeChildren();
  await Promise.all([...inProcess].map((rt) => stopRuntime(rt)));
});

async function startInProcess(opts: Parameters<typeof startTestRuntime>[1] = {}): Promise<TestRuntime> {
  const rt = await startTestRuntime(tdb, opts);
  inProcess.add(rt);
  return rt;
}

async function stopRuntime(rt: TestRuntime): Promise<void> {
  if (!inProcess.delete(rt)) return;
  await rt.stop();
}

// ---------------------------------------------------------------- log analysis

interface TurnView {
  turnId: string;
  reason: string | undefined;
  events: SessionEvent[];
  /** Human prompts claimed into this turn, by message id. */
  prompts: string[];
  assistant: PayloadOf<"assistant_message">[];
  deltas: string;
}

/**
 * Checks what double driving or a lost write would break: seq is 1..n without gaps, turns
 * never overlap (every event of a turn lies between its start and end), and input enters only
 * inside a turn. Returns the turns in order.
 */
function analyse(events: SessionEvent[]): TurnView[] {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  const turns: TurnView[] = [];
  let open: TurnView | null = null;
  for (const e of events) {
    const p = e.payload;
    if (p.kind === "turn_start") {
      expect(open, `turn ${p.turnId} started inside turn ${open?.turnId}`).toBeNull();
      open = { turnId: p.turnId, reason: undefined, events: [], prompts: [], assistant: [], deltas: "" };
      turns.push(open);
    }
    expect(open, `seq ${e.seq} (${p.kind}) outside any turn`).not.toBeNull();
    if ("turnId" in p) expect(p.turnId, `seq ${e.seq} (${p.kind}) belongs to another turn`).toBe(open!.turnId);
    open!.events.push(e);
    if (p.kind === "user_message" && p.source.kind === "human") open!.prompts.push(p.messageId);
    if (p.kind === "assistant_message") open!.assistant.push(p);
    if (p.kind === "assistant_delta") open!.deltas += p.text;
    if (p.kind === "turn_end") {
      open!.reason = p.reason;
      open = null;
    }
  }
  return turns;
}

function countMessage(events: SessionEvent[], messageId: string): number {
  return events.filter((e) => e.payload.kind === "user_message" && e.payload.messageId === messageId).length;
}

async function sessionRow(id: SessionId) {
  return db.session.findUniqueOrThrow({
    where: { id },
    select: { leaseOwner: true, leaseToken: true, leaseExpiresAt: true, activeTurnId: true, status: true },
  });
}

/** What the default scripted model answers to a lone prompt (the turn's full reply). */
function fullReplyTo(prompt: string): string {
  return defaultPlaybook({ system: "", messages: [{ role: "user", text: prompt }], tools: [], purpose: "step" }).text;
}

async function hasDeltas(id: SessionId): Promise<boolean> {
  return (await eventsOf(db, id)).some((e) => e.payload.kind === "assistant_delta");
}

// ---------------------------------------------------------------- tests

describe("a runtime process killed mid-turn (SIGKILL)", () => {
  it("leaves an open turn that the next runtime closes as interrupted, keeping the streamed text, then runs the queued prompt once", { timeout: TEST_TIMEOUT }, async () => {
    // ~75 chunks at 60 ms: the turn streams for seconds, so the kill lands mid-turn.
    const child = await spawnRuntime(tdb, {
      SCRIPTED_MODEL_DELAY_MS: "60",
      AGENT_LEASE_TTL_MS: "1000",
      RUNTIME_RECOVERY_INTERVAL_MS: "200",
    });
    const id = await newTestSession(db);
    const promptA = "Explain how a write-ahead log survives a crash";
    const a = await promptSession(db, id, { text: promptA });
    await waitFor(() => hasDeltas(id), WAIT_MS, "turn A streaming in the child");
    const b = await promptSession(db, id, { text: "Then summarise it in one line" });

    const exit = await child.kill("SIGKILL");
    expect(exit.signal).toBe("SIGKILL");

    // The process died with A's turn open and its lease still on the row.
    const crashed = await eventsOf(db, id);
    expect(turnEnds(crashed), "turn A ended before the kill").toEqual([]);
    const streamed = crashed.flatMap((e) => (e.payload.kind === "assistant_delta" ? [e.payload.text] : [])).join("");
    expect(streamed).not.toBe("");
    const dead = await sessionRow(id);
    expect(dead).toMatchObject({ leaseOwner: child.ownerId, activeTurnId: expect.any(String) });
    expect((await listInbox(db, id)).map((i) => i.id)).toEqual([b.id]);

    // A new runtime adopts the agent once the dead process's lease expires.
    const rt = await startInProcess({ config: { leaseTtlMs: 1_000, recoveryIntervalMs: 200 } });
    const events = await waitForTurns(db, id, 2, WAIT_MS);
    const turns = analyse(events);
    expect(turns).toHaveLength(2);
    const [turnA, turnB] = turns as [TurnView, TurnView];

    expect(turnA.turnId).toBe(dead.activeTurnId);
    expect(turnA.reason).toBe("interrupted");
    expect(turnA.prompts).toEqual([a.id]);
    // The streamed part is kept as an interrupted assistant message, verbatim.
    expect(turnA.assistant).toHaveLength(1);
    expect(turnA.assistant[0]).toMatchObject({ interrupted: true, text: streamed, toolCalls: [] });
    expect(fullReplyTo(promptA).startsWith(streamed)).toBe(true);
    expect(streamed.length).toBeLessThan(fullReplyTo(promptA).length);
    // ... right before the turn end.
    expect(turnA.events.slice(-2).map((e) => e.payload.kind)).toEqual(["assistant_message", "turn_end"]);

    expect(turnB.reason).toBe("completed");
    expect(turnB.prompts).toEqual([b.id]);
    expect(turnB.assistant.at(-1)).toMatchObject({ interrupted: false });
    expect(countMessage(events, a.id)).toBe(1);
    expect(countMessage(events, b.id)).toBe(1);
    expect(await listInbox(db, id)).toEqual([]);

    const after = await sessionRow(id);
    expect(after.leaseOwner).toBe(rt.runtime.ownerId);
    expect(after.leaseToken).toBeGreaterThan(dead.leaseToken);
    expect(rt.logs.some((l) => l.includes(`closed turn ${turnA.turnId} left open by a crash`))).toBe(true);
  });
});

describe("two runtime processes on one database", () => {
  it("never drive the same agent: every prompt is claimed once and every turn completes once", { timeout: TEST_TIMEOUT }, async () => {
    const env = {
      SCRIPTED_MODEL_DELAY_MS: "0",
      AGENT_LEASE_TTL_MS: "5000",
      RUNTIME_RECOVERY_INTERVAL_MS: "300",
      // Short, so that the second round finds every agent evicted and both processes race to
      // cold-resume it.
      AGENT_IDLE_EVICT_MS: "400",
    };
    const [c1, c2] = await Promise.all([spawnRuntime(tdb, env), spawnRuntime(tdb, env)]);
    const owners = new Set([c1.ownerId, c2.ownerId]);
    const ids = await Promise.all(Array.from({ length: 12 }, (_, i) => newTestSession(db, `contended ${i}`)));

    // Who holds each lease, sampled while the agents run.
    const seenOwners = new Map<string, Set<string>>(ids.map((id) => [id, new Set()]));
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const rows = await db.session.findMany({ where: { id: { in: ids } }, select: { id: true, leaseOwner: true } });
        for (const r of rows) if (r.leaseOwner) seenOwners.get(r.id)!.add(r.leaseOwner);
        await new Promise((r) => setTimeout(r, 15));
      }
    })();

    const allDone = (n: number) =>
      waitFor(
        async () => {
          const ends = await db.sessionEvent.groupBy({
            by: ["sessionId"],
            where: { sessionId: { in: ids }, kind: "turn_end" },
            _count: { _all: true },
          });
          const active = await db.session.count({ where: { id: { in: ids }, activeTurnId: { not: null } } });
          return ends.length === ids.length && ends.every((e) => e._count._all >= n) && active === 0;
        },
        WAIT_MS,
        `${n} turns in each of ${ids.length} sessions`,
      );

    // Round 1: three queued prompts per agent, committed together (so that no agent idles
    // between them long enough to be evicted).
    const prompts = new Map<string, string[]>();
    await Promise.all(
      ids.map(async (id, i) => {
        const items = await inTx(db, async (tx) => {
          const list = [];
          for (let k = 0; k < 3; k++) {
            list.push(await enqueue(tx, id, { mode: "queue", text: `agent ${i} prompt ${k}`, source: { kind: "human" } }));
          }
          return list;
        });
        prompts.set(id, items.map((item) => item.id));
      }),
    );
    await allDone(3);
    const tokensAfterRound1 = new Map(
      (await db.session.findMany({ where: { id: { in: ids } }, select: { id: true, leaseToken: true } })).map((r) => [
        r.id,
        r.leaseToken,
      ]),
    );

    // Round 2: every agent evicted, then one more prompt each; whichever process wins the
    // lease cold-resumes it.
    await waitFor(
      async () => (await db.session.count({ where: { id: { in: ids }, leaseOwner: { not: null } } })) === 0,
      WAIT_MS,
      "all agents evicted",
    );
    await Promise.all(
      ids.map(async (id, i) => prompts.get(id)!.push((await promptSession(db, id, { text: `agent ${i} prompt 3` })).id)),
    );
    await allDone(4);
    sampling = false;
    await sampler;

    // Neither process lost a lease or crashed a driver.
    for (const c of [c1, c2]) expect(c.logs().filter((l) => LOST_OR_CRASHED.test(l))).toEqual([]);

    // Double driving would show as overlapping turns, a prompt claimed twice, a turn run
    // twice or a seq gap (analyse); a silently lost lease as an extra acquisition.
    for (const id of ids) {
      const events = await eventsOf(db, id);
      const turns = analyse(events);
      expect(turns.map((t) => t.reason)).toEqual(["completed", "completed", "completed", "completed"]);
      // One prompt per turn, FIFO, each exactly once.
      expect(turns.map((t) => t.prompts)).toEqual(prompts.get(id)!.map((p) => [p]));
      for (const p of prompts.get(id)!) expect(countMessage(events, p)).toBe(1);
      for (const t of turns) expect(t.assistant.map((m) => m.interrupted)).toEqual([false]);
      expect(await listInbox(db, id)).toEqual([]);
      // One lease acquisition per round: no lease was lost and taken over. (Before the fix
      // in Runtime.heartbeat, a renewal racing with an acquisition shut the new driver down
      // silently; its agent then waited for the lease to expire and was taken over here.)
      expect(tokensAfterRound1.get(id)).toBe(1);
      expect((await sessionRow(id)).leaseToken).toBe(2);
      for (const o of seenOwners.get(id)!) expect(owners.has(o)).toBe(true);
    }
    // Both processes did drive agents (the contention was real).
    const drivers = new Set([...seenOwners.values()].flatMap((s) => [...s]));
    expect(drivers).toEqual(owners);

    for (const c of [c1, c2]) {
      const exit = await c.kill("SIGTERM");
      expect(exit.code).toBe(0);
      expect(c.lines.at(-1)).toBe("STOPPED");
    }
  });
});

describe("lease fencing", () => {
  it("makes a lease taken over after expiry useless to its old holder", { timeout: TEST_TIMEOUT }, async () => {
    const id = await newTestSession(db);
    const ttl = 150;
    // No work, no lease: acquisition needs a pending input or an open turn.
    expect(await acquireLease(db, id, "owner-a", ttl)).toBeNull();
    const item = await promptSession(db, id, { text: "fenced" });

    const a = (await acquireLease(db, id, "owner-a", ttl))!;
    expect(a).toEqual({ owner: "owner-a", token: 1 });
    // A live lease cannot be taken.
    expect(await acquireLease(db, id, "owner-b", ttl)).toBeNull();
    const turnId = newTurnId();
    const written = await inTx(db, (tx) => appendEvents(tx, id, [{ kind: "turn_start", turnId }], a));
    expect(written.map((e) => e.seq)).toEqual([1]);
    expect([...(await renewLeases(db, "owner-a", [id], ttl))]).toEqual([id]);

    // Once it expires, another owner takes it, with the next fencing token.
    const b = await waitFor(() => acquireLease(db, id, "owner-b", 60_000), WAIT_MS, "expired lease taken over");
    expect(b).toEqual({ owner: "owner-b", token: 2 });

    // The old holder's appends fail and write nothing, even as part of a larger transaction.
    const stale = inTx(db, async (tx) => {
      const claimed = await claimInbox(tx, id, { firstStep: true });
      expect(claimed.map((c) => c.id)).toEqual([item.id]);
      return appendEvents(
        tx,
        id,
        [{ kind: "user_message", messageId: item.id, text: item.text, source: item.source }],
        a,
      );
    });
    await expect(stale).rejects.toSatisfy((e) => isAppError(e, "LEASE_LOST"));
    expect((await eventsOf(db, id)).map((e) => e.seq)).toEqual([1]);
    expect((await sessionRow(id)).leaseOwner).toBe("owner-b");
    expect((await listInbox(db, id)).map((i) => i.id)).toEqual([item.id]); // the claim rolled back

    // Heartbeat and release of the old holder do nothing to the new holder's lease.
    expect([...(await renewLeases(db, "owner-a", [id], ttl))]).toEqual([]);
    expect(await releaseLease(db, id, a)).toBe(false);
    expect(await sessionRow(id)).toMatchObject({ leaseOwner: "owner-b", leaseToken: 2 });
    expect([...(await renewLeases(db, "owner-b", [id], 60_000))]).toEqual([id]);

    // The new holder writes on from the same seq.
    const next = await inTx(db, (tx) => appendEvents(tx, id, [{ kind: "turn_end", turnId, reason: "interrupted" }], b));
    expect(next.map((e) => e.seq)).toEqual([2]);

    // Released: the agent is inactive, and the released lease fences like a lost one.
    expect(await releaseLease(db, id, b)).toBe(true);
    expect(await sessionRow(id)).toMatchObject({ leaseOwner: null, leaseExpiresAt: null, status: "inactive" });
    expect((await getSession(db, id)).status).toBe("inactive");
    await expect(inTx(db, (tx) => appendEvents(tx, id, [{ kind: "turn_start", turnId: newTurnId() }], b))).rejects.toSatisfy(
      (e) => isAppError(e, "LEASE_LOST"),
    );

    // The token, not the owner name, fences: the same owner re-acquiring gets a new token and
    // its earlier token is dead.
    const b2 = (await acquireLease(db, id, "owner-b", 60_000))!;
    expect(b2).toEqual({ owner: "owner-b", token: 3 });
    const stillB: Lease = { owner: "owner-b", token: 2 };
    await expect(
      inTx(db, (tx) => appendEvents(tx, id, [{ kind: "user_message", messageId: newMessageId(), text: "x", source: { kind: "system" } }], stillB)),
    ).rejects.toSatisfy((e) => isAppError(e, "LEASE_LOST"));
    expect((await eventsOf(db, id)).map((e) => e.seq)).toEqual([1, 2]);

    // Leave nothing for later tests' runtimes to adopt.
    expect(await releaseLease(db, id, b2)).toBe(true);
    await db.inboxItem.deleteMany({ where: { sessionId: id } });
  });
});

describe("lease bookkeeping of a live process", () => {
  it("a heartbeat renewal that raced with an acquisition does not shut the new driver down", { timeout: TEST_TIMEOUT }, async () => {
    // Heartbeat every 2 s; the renewal is made to block on a row lock while another agent is
    // acquired, so its result cannot contain the new agent.
    const rt = await startInProcess({ config: { leaseTtlMs: 6_000 } });
    const z = await newTestSession(db, "resident");
    await promptSession(db, z, { text: "keep me resident" });
    await waitForTurns(db, z, 1, WAIT_MS);

    const locker = new pg.Client({ connectionString: directUrlOf(tdb) });
    locker.on("error", () => undefined);
    await locker.connect();
    try {
      await locker.query("BEGIN");
      await locker.query("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", [z]);
      await waitFor(
        async () => {
          // Not on the locker's connection: pg_stat_activity is a snapshot per transaction.
          const rows = await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%SET lease_expires_at%'`;
          return rows[0]!.n > 0;
        },
        WAIT_MS,
        "a heartbeat blocked on the lock",
      );
      const x = await newTestSession(db, "acquired meanwhile");
      await promptSession(db, x, { text: "first" });
      await waitForTurns(db, x, 1, WAIT_MS);
      expect(rt.runtime.residentIds()).toContain(x);
      await locker.query("ROLLBACK");
      await waitFor(
        async () => {
          const rows = await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%SET lease_expires_at%'`;
          return rows[0]!.n === 0;
        },
        WAIT_MS,
        "the blocked heartbeat to finish",
      );

      // The agent is still driven here: its next prompt runs at once.
      const second = await promptSession(db, x, { text: "second" });
      const events = await waitForTurns(db, x, 2, 20_000);
      expect(analyse(events).map((t) => t.prompts[0])).toContain(second.id);
      expect(rt.logs.filter((l) => LOST_OR_CRASHED.test(l))).toEqual([]);
    } finally {
      await locker.end().catch(() => undefined);
    }
  });

  it("a driver that crashed does not strand its agent behind a lease nobody uses", { timeout: TEST_TIMEOUT }, async () => {
    const rdb = createDb(tdb, 5);
    const hub = new ActivityHub(tdb);
    await hub.start();
    const model = new ScriptedModel({ delayMs: 0 });
    const logs: string[] = [];
    let failOnce: string | null = null;
    const runtime = new Runtime({
      db: rdb,
      hub,
      config: { ...TEST_CONFIG, leaseTtlMs: 1_000 },
      resolveModel: () => model,
      log: (l) => logs.push(l),
      // An unexpected error inside the driver (here: while it sets up its tools), once.
      toolsFor: (id) => {
        if (id === failOnce) {
          failOnce = null;
          throw new Error("transient failure");
        }
        return { tools: builtinTools };
      },
    });
    await runtime.start();
    try {
      // Another resident agent keeps the process's heartbeat going.
      const z = await newTestSession(db, "resident");
      await promptSession(db, z, { text: "keep me resident" });
      await waitForTurns(db, z, 1, WAIT_MS);

      const x = await newTestSession(db, "crashes once");
      failOnce = x;
      const item = await promptSession(db, x, { text: "run me anyway" });
      await waitFor(() => logs.some((l) => l.includes(`agent ${x} crashed`)), WAIT_MS, "the driver crash");
      // A later driver (here or in another process) runs the prompt.
      const events = await waitForTurns(db, x, 1, 20_000);
      expect(analyse(events).map((t) => [t.reason, t.prompts])).toEqual([["completed", [item.id]]]);
    } finally {
      await runtime.stop();
      await hub.close();
      await rdb.$disconnect();
    }
  });
});

describe("idle eviction and cold resume", () => {
  it("releases the lease of an idle agent, and the next prompt cold-resumes it with its history", { timeout: TEST_TIMEOUT }, async () => {
    const requests: ModelRequest[] = [];
    const playbook: Playbook = (request) => {
      if (request.purpose === "step") requests.push(request);
      return defaultPlaybook(request);
    };
    const rt = await startInProcess({ config: { idleEvictMs: 300 }, playbook });
    const id = await newTestSession(db);

    const first = await promptSession(db, id, { text: "Remember the word marmalade" });
    await waitForTurns(db, id, 1, WAIT_MS);
    await waitFor(async () => (await getSession(db, id)).status === "inactive", WAIT_MS, "evicted");
    const evicted = await sessionRow(id);
    expect(evicted).toMatchObject({ leaseOwner: null, leaseExpiresAt: null, status: "inactive", activeTurnId: null });
    await waitFor(() => !rt.runtime.residentIds().includes(id), WAIT_MS, "driver gone");

    const second = await promptSession(db, id, { text: "Which word did I ask you to remember?" });
    const events = await waitForTurns(db, id, 2, WAIT_MS);
    const resumed = await sessionRow(id);
    expect(resumed.leaseToken).toBe(evicted.leaseToken + 1);
    expect(resumed.leaseOwner).toBe(rt.runtime.ownerId);

    const turns = analyse(events);
    expect(turns.map((t) => t.reason)).toEqual(["completed", "completed"]);
    expect(turns.map((t) => t.prompts)).toEqual([[first.id], [second.id]]);

    // The cold-resumed driver rebuilt the model history from the log: the second turn's
    // request carries the whole first turn.
    expect(requests).toHaveLength(2);
    const [r1, r2] = requests as [ModelRequest, ModelRequest];
    expect(r2.messages.length).toBeGreaterThan(r1.messages.length);
    expect(r2.messages.slice(0, r1.messages.length)).toEqual(r1.messages);
    const firstReply = turns[0]!.assistant[0]!.text;
    expect(r2.messages).toContainEqual({ role: "assistant", text: firstReply, toolCalls: [] });
    expect(r2.messages.slice(r1.messages.length)).toContainEqual({ role: "user", text: "Which word did I ask you to remember?" });
    expect(r2.system).toBe(r1.system);
    expect(r2.tools).toEqual(r1.tools);
  });
});

describe("graceful stop mid-turn", () => {
  async function promptAndStream(text: string) {
    const id = await newTestSession(db);
    const a = await promptSession(db, id, { text });
    await waitFor(() => hasDeltas(id), WAIT_MS, "turn A streaming");
    const b = await promptSession(db, id, { text: "Queued behind A" });
    return { id, a, b };
  }

  async function expectStoppedCleanly(id: SessionId, a: { id: string }, b: { id: string }) {
    const events = await eventsOf(db, id);
    const turns = analyse(events);
    expect(turns).toHaveLength(1);
    expect(turns[0]!.reason).toBe("interrupted");
    expect(turns[0]!.prompts).toEqual([a.id]);
    expect(turns[0]!.assistant).toEqual([expect.objectContaining({ interrupted: true, toolCalls: [] })]);
    // The shown text is kept: at least what was flushed as deltas.
    expect(turns[0]!.assistant[0]!.text.startsWith(turns[0]!.deltas)).toBe(true);
    expect(await sessionRow(id)).toMatchObject({ leaseOwner: null, activeTurnId: null, status: "inactive" });
    expect((await getSession(db, id)).status).toBe("inactive");
    // B stays queued, and a resume notice (Steer) will wake the agent to continue A's work.
    const inbox = await listInbox(db, id);
    expect(inbox.filter((i) => i.source.kind === "human").map((i) => i.id)).toEqual([b.id]);
    expect(inbox.filter((i) => i.source.kind === "system").map((i) => [i.mode, i.text])).toEqual([["steer", RESUME_NOTICE]]);
  }

  async function expectNextRuntimeRunsQueued(id: SessionId, a: { id: string }, b: { id: string }) {
    const events = await waitForTurns(db, id, 2, WAIT_MS);
    const turns = analyse(events);
    expect(turns.map((t) => t.reason)).toEqual(["interrupted", "completed"]);
    expect(turns[1]!.prompts).toEqual([b.id]);
    expect(countMessage(events, a.id)).toBe(1);
    expect(countMessage(events, b.id)).toBe(1);
    expect(await listInbox(db, id)).toEqual([]);
  }

  it("runtime.stop() ends the open turn as interrupted, releases the lease and keeps the inbox", { timeout: TEST_TIMEOUT }, async () => {
    const rt1 = await startInProcess({ delayMs: 40 });
    const { id, a, b } = await promptAndStream("Describe a lighthouse at night");
    await stopRuntime(rt1);
    expect(rt1.runtime.residentIds()).toEqual([]);
    await expectStoppedCleanly(id, a, b);

    await startInProcess();
    await expectNextRuntimeRunsQueued(id, a, b);
  });

  it("SIGTERM stops a runtime process the same way", { timeout: TEST_TIMEOUT }, async () => {
    const child = await spawnRuntime(tdb, { SCRIPTED_MODEL_DELAY_MS: "40", AGENT_LEASE_TTL_MS: "2000" });
    const { id, a, b } = await promptAndStream("Describe a harbour at dawn");
    const exit = await child.kill("SIGTERM");
    expect(exit).toEqual({ code: 0, signal: null });
    expect(child.lines.at(-1)).toBe("STOPPED");
    expect(child.logs().filter((l) => LOST_OR_CRASHED.test(l))).toEqual([]);
    await expectStoppedCleanly(id, a, b);

    const next = await spawnRuntime(tdb, { SCRIPTED_MODEL_DELAY_MS: "0" });
    await expectNextRuntimeRunsQueued(id, a, b);
    expect((await sessionRow(id)).leaseOwner).toBe(next.ownerId);
  });
});
