import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterEach, describe, expect } from "vitest";
import { createDb, databaseEnv, type Db, directUrlOf } from "../db/client";
import { isAppError } from "../errors";
import { ACTIVITY_CHANNEL } from "../db/notify";
import { asSessionId, newSessionId, type SessionId } from "../ids";
import type { PayloadOf, SessionEvent } from "../runtime/events";
import { listInbox } from "../testing/inbox";
import { getSession, promptSession } from "../runtime/sessions";
import type { TestDatabase } from "../testing/db";
import { databaseTest } from "../testing/fixtures";
import {
  eventsOf,
  newTestSession,
  startTestRuntime,
  turnEnds,
  waitFor,
  waitForTurns,
  type TestRuntime,
} from "../testing/runtime-harness";
import { deliverPending, listMessages, recentMessages, consumedStatement, queueMessage, recoverMailbox, sendMessage, type SendOptions, type SendResult } from "./mailbox";
import { teamMessageText } from "../../shared/message-format";
import type { MemberRef } from "../members/membership";

// The team mailbox against real Postgres: Steer delivery to running, idle and inactive
// targets, sender attribution, message states, limits, temporary failure and recovery, crash
// windows with real processes killed by SIGKILL (server/testing/mailbox-process.ts), and many
// concurrent senders to one target.

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
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
const runtimes = new Set<TestRuntime>();
const children = new Set<MailboxChild>();

afterEach(async () => {
  // Nothing a test started may drive sessions into the next test.
  await Promise.all([...children].map((c) => c.kill()));
  await Promise.all([...runtimes].map((rt) => stopRuntime(rt)));
});

async function startRuntime(opts: Parameters<typeof startTestRuntime>[1] = {}): Promise<TestRuntime> {
  const rt = await startTestRuntime(tdb, { onClaimed: consumedStatement, ...opts });
  runtimes.add(rt);
  return rt;
}

async function stopRuntime(rt: TestRuntime): Promise<void> {
  if (!runtimes.delete(rt)) return;
  await rt.stop();
}

// ---------------------------------------------------------------- teams

interface TestTeam {
  teamId: string;
  lead: MemberRef;
  m: Record<string, MemberRef>;
}

/** A Lead (createSession) and active teammates (Session + TeamMember rows, as the roster writes them). */
async function newTeam(...names: string[]): Promise<TestTeam> {
  const leadId = await newTestSession(db, "lead");
  const m: Record<string, MemberRef> = {};
  for (const name of names) {
    const id = newSessionId();
    await db.session.create({
      data: { id, title: name, model: { provider: "scripted", model: "keyless" }, teamId: leadId, memberName: name },
    });
    await db.teamMember.create({
      data: { teamId: leadId, name, sessionId: id, description: `the ${name}`, context: "fresh", phase: "active" },
    });
    m[name] = { sessionId: id, name };
  }
  return { teamId: leadId, lead: { sessionId: leadId, name: "lead" }, m };
}

function send(team: TestTeam, sender: MemberRef, target: MemberRef, content: string, opts?: SendOptions): Promise<SendResult> {
  return sendMessage(db, { teamId: team.teamId, sender, target, content }, opts);
}

// ---------------------------------------------------------------- log helpers

type UserMessage = PayloadOf<"user_message">;

function teamMessages(events: SessionEvent[]): UserMessage[] {
  return events.flatMap((e) => (e.payload.kind === "user_message" && e.payload.source.kind === "team" ? [e.payload] : []));
}

function countMessage(events: SessionEvent[], messageId: string): number {
  return events.filter((e) => e.payload.kind === "user_message" && e.payload.messageId === messageId).length;
}

/** The turn each message id entered in. */
function turnOfMessage(events: SessionEvent[], messageId: string): string | undefined {
  let turn: string | undefined;
  for (const { payload: p } of events) {
    if (p.kind === "turn_start") turn = p.turnId;
    if (p.kind === "user_message" && p.messageId === messageId) return turn;
  }
  return undefined;
}

async function messageRows(ids: string[]) {
  const rows = await db.teamMessage.findMany({ where: { id: { in: ids } }, orderBy: { seq: "asc" } });
  return new Map(rows.map((r) => [r.id, r]));
}

async function waitConsumed(ids: string[], timeoutMs = WAIT_MS) {
  await waitFor(
    async () => (await db.teamMessage.count({ where: { id: { in: ids }, consumedAt: { not: null } } })) === ids.length,
    timeoutMs,
    `${ids.length} messages consumed`,
  );
  return messageRows(ids);
}

const hasDeltas = async (id: SessionId) => (await eventsOf(db, id)).some((e) => e.payload.kind === "assistant_delta");

/** Every message once in the target's history, in this order, consumed, nothing left in the inbox. */
async function expectConsumedOnceInOrder(target: SessionId, ids: string[]) {
  const rows = await waitConsumed(ids);
  const events = await eventsOf(db, target);
  for (const id of ids) expect(countMessage(events, id), `user_message ${id}`).toBe(1);
  const order = teamMessages(events).map((p) => p.messageId).filter((id) => ids.includes(id));
  expect(order).toEqual(ids);
  for (const id of ids) {
    const r = rows.get(id)!;
    expect(r.state).toBe("delivered");
    expect(r.deliveredAt!.getTime()).toBeGreaterThanOrEqual(r.createdAt.getTime());
    expect(r.consumedAt!.getTime()).toBeGreaterThanOrEqual(r.deliveredAt!.getTime());
  }
  await waitFor(async () => (await listInbox(db, target)).length === 0, WAIT_MS, "an empty inbox");
  return events;
}

// ---------------------------------------------------------------- delivery

describe("delivery (Steer)", () => {
  it("reaches a RUNNING target at its next step boundary, in the same turn, attributed to the Lead", { timeout: TEST_TIMEOUT }, async () => {
    await startRuntime({ delayMs: 40 });
    const team = await newTeam("implementer");
    const target = team.m.implementer!;
    const prompt = await promptSession(db, target.sessionId, { text: "What time is it?" });
    await waitFor(() => hasDeltas(target.sessionId), WAIT_MS, "step 0 streaming");

    const res = await send(team, team.lead, target, "Also note the build is green.");
    expect(res.status).toBe("accepted");
    const events = await waitForTurns(db, target.sessionId, 1, WAIT_MS);

    expect(turnEnds(events).map((t) => t.reason)).toEqual(["completed"]);
    expect(turnOfMessage(events, res.messageId)).toBe(turnOfMessage(events, prompt.id));
    const at = events.findIndex((e) => e.payload.kind === "user_message" && e.payload.messageId === res.messageId);
    expect(at).toBeGreaterThan(events.findIndex((e) => e.payload.kind === "assistant_message"));
    expect(events[at - 1]!.payload).toMatchObject({ kind: "step_start", step: expect.any(Number) });
    expect((events[at - 1]!.payload as PayloadOf<"step_start">).step).toBeGreaterThanOrEqual(1);

    const msg = events[at]!.payload as UserMessage;
    expect(msg.text).toBe(teamMessageText(res.messageId, "lead", "Also note the build is green."));
    expect(msg.text.startsWith(`Team message ${res.messageId} from lead:\n`)).toBe(true);
    expect(msg.source).toEqual({
      kind: "team",
      teamId: team.teamId,
      messageId: res.messageId,
      senderSessionId: team.lead.sessionId,
      senderName: "lead",
    });
    // The model saw it: the last reply takes the message up.
    const last = events.filter((e) => e.payload.kind === "assistant_message").at(-1)!.payload;
    expect(last.kind === "assistant_message" && last.text).toContain("build is green");
    await expectConsumedOnceInOrder(target.sessionId, [res.messageId]);
  });

  it("starts a turn on an IDLE target; sibling to sibling keeps the sibling as the sender", { timeout: TEST_TIMEOUT }, async () => {
    await startRuntime();
    const team = await newTeam("researcher", "implementer");
    const { researcher, implementer } = team.m as { researcher: MemberRef; implementer: MemberRef };
    await promptSession(db, implementer.sessionId, { text: "hello" });
    await waitForTurns(db, implementer.sessionId, 1, WAIT_MS);
    await waitFor(async () => (await getSession(db, implementer.sessionId)).status === "idle", WAIT_MS, "idle");

    const res = await send(team, researcher, implementer, "The parser lives in src/parse.ts");
    expect(res.status).toBe("accepted");
    const events = await waitForTurns(db, implementer.sessionId, 2, WAIT_MS);
    expect(turnEnds(events).map((t) => t.reason)).toEqual(["completed", "completed"]);

    // The message opened the second turn: turn_start, step_start, the message.
    const second = events.findIndex((e) => e.payload.kind === "turn_start" && e.seq > 1);
    expect(events.slice(second, second + 3).map((e) => e.payload.kind)).toEqual(["turn_start", "step_start", "user_message"]);
    const msg = events[second + 2]!.payload as UserMessage;
    expect(msg.messageId).toBe(res.messageId);
    expect(msg.text.startsWith(`Team message ${res.messageId} from researcher:\n`)).toBe(true);
    expect(msg.source).toEqual({
      kind: "team",
      teamId: team.teamId,
      messageId: res.messageId,
      senderSessionId: researcher.sessionId,
      senderName: "researcher",
    });
    expect(msg.source).not.toMatchObject({ senderSessionId: team.lead.sessionId });
    await expectConsumedOnceInOrder(implementer.sessionId, [res.messageId]);
  });

  it("cold-resumes an INACTIVE (evicted) target; teammate to Lead keeps the teammate as the sender", { timeout: TEST_TIMEOUT }, async () => {
    const rt = await startRuntime({ config: { idleEvictMs: 300 } });
    const team = await newTeam("researcher");
    const lead = team.lead.sessionId;
    await promptSession(db, lead, { text: "Remember the word marmalade" });
    await waitForTurns(db, lead, 1, WAIT_MS);
    await waitFor(async () => (await getSession(db, lead)).status === "inactive", WAIT_MS, "evicted");
    await waitFor(() => !rt.runtime.residentIds().includes(lead), WAIT_MS, "driver gone");
    const evicted = await db.session.findUniqueOrThrow({ where: { id: lead }, select: { leaseToken: true, leaseOwner: true } });
    expect(evicted.leaseOwner).toBeNull();

    const res = await send(team, team.m.researcher!, team.lead, "Findings are in notes/findings.md");
    expect(res.status).toBe("accepted");
    const events = await waitForTurns(db, lead, 2, WAIT_MS);
    const resumed = await db.session.findUniqueOrThrow({ where: { id: lead }, select: { leaseToken: true, leaseOwner: true } });
    expect(resumed.leaseToken).toBe(evicted.leaseToken + 1);
    expect(resumed.leaseOwner).toBe(rt.runtime.ownerId);
    const [msg] = teamMessages(events);
    expect(msg).toMatchObject({
      messageId: res.messageId,
      source: { kind: "team", senderSessionId: team.m.researcher!.sessionId, senderName: "researcher", messageId: res.messageId },
    });
    expect(msg!.text.startsWith(`Team message ${res.messageId} from researcher:\n`)).toBe(true);
    expect(turnOfMessage(events, res.messageId)).toBe(turnEnds(events)[1]!.turnId);
    await expectConsumedOnceInOrder(lead, [res.messageId]);
  });

  it("holds mail for an INACTIVE target no runtime drives; the runtime that starts cold-resumes it, earlier mail first", { timeout: TEST_TIMEOUT }, async () => {
    const team = await newTeam("researcher", "implementer");
    const target = team.m.implementer!;
    // Earlier mail left queued (a delivery that failed), then a new send: its delivery takes
    // the earlier row first.
    const earlier = await queueMessage(db, { teamId: team.teamId, sender: team.m.researcher!, target, content: "first: read the spec" });
    const later = await send(team, team.lead, target, "second: then write the tests");
    expect(later.status).toBe("accepted");

    const before = await listMessages(db, team.teamId);
    expect(before.map((v) => [v.id, v.state, v.senderName, v.targetName])).toEqual([
      [earlier.messageId, "delivered", "researcher", "implementer"],
      [later.messageId, "delivered", "lead", "implementer"],
    ]);
    for (const v of before) expect(v).toMatchObject({ deliveredAt: expect.any(Date), consumedAt: null, targetSessionId: target.sessionId });
    expect((await listInbox(db, target.sessionId)).map((i) => [i.id, i.mode])).toEqual([
      [earlier.messageId, "steer"],
      [later.messageId, "steer"],
    ]);
    expect((await getSession(db, target.sessionId)).status).toBe("inactive");
    expect(await eventsOf(db, target.sessionId)).toEqual([]);

    await startRuntime();
    const events = await waitForTurns(db, target.sessionId, 1, WAIT_MS);
    // One turn, both messages at its first step, in commit order.
    expect(turnEnds(events).map((t) => t.reason)).toEqual(["completed"]);
    expect(teamMessages(events).map((p) => p.messageId)).toEqual([earlier.messageId, later.messageId]);
    await expectConsumedOnceInOrder(target.sessionId, [earlier.messageId, later.messageId]);

    const after = await listMessages(db, team.teamId);
    expect(after.map((v) => v.state)).toEqual(["consumed", "consumed"]);
    for (const v of after) {
      expect(v.createdAt.getTime()).toBeLessThanOrEqual(v.deliveredAt!.getTime());
      expect(v.deliveredAt!.getTime()).toBeLessThanOrEqual(v.consumedAt!.getTime());
    }
    expect(await listMessages(db, team.teamId, { afterSeq: after[0]!.seq })).toEqual([after[1]]);
    expect(await listMessages(db, team.teamId, { limit: 1 })).toEqual([after[0]]);
    // The room shows the newest: with more messages than it reads, the last ones, in seq order.
    expect(await recentMessages(db, team.teamId, 1)).toEqual([after[1]]);
    expect(await recentMessages(db, team.teamId, 5)).toEqual(after);
  });
});

// ---------------------------------------------------------------- limits

describe("limits and refusals", () => {
  async function rowsTo(target: MemberRef) {
    return db.teamMessage.count({ where: { targetSessionId: target.sessionId } });
  }

  it("refuse self-messages, oversized messages and full mailboxes without persisting anything", { timeout: TEST_TIMEOUT }, async () => {
    const team = await newTeam("researcher", "implementer", "reviewer");
    const { researcher, implementer, reviewer } = team.m as Record<string, MemberRef>;
    const code = (p: Promise<unknown>) => p.then(() => "resolved", (e: unknown) => (isAppError(e) ? e.code : String(e)));
    const total = () => db.teamMessage.count({ where: { teamId: team.teamId } });
    const inbox = (t: MemberRef) => db.inboxItem.count({ where: { sessionId: t.sessionId } });

    // Self.
    expect(await code(send(team, researcher!, researcher!, "note to self"))).toBe("TEAM_SELF_MESSAGE");
    expect(await code(send(team, team.lead, team.lead, "note to self"))).toBe("TEAM_SELF_MESSAGE");
    expect(await total()).toBe(0);

    // Size, in UTF-8 bytes: 64 KiB exactly is fine, one byte more is not; 32 769 two-byte
    // characters (65 538 bytes) are refused although they are fewer than 64 Ki characters.
    expect((await send(team, researcher!, reviewer!, "x".repeat(65_536))).status).toBe("accepted");
    expect(await code(send(team, researcher!, reviewer!, "x".repeat(65_537)))).toBe("TEAM_MESSAGE_TOO_LARGE");
    expect(await code(send(team, researcher!, reviewer!, "é".repeat(32_769)))).toBe("TEAM_MESSAGE_TOO_LARGE");
    expect(await code(send(team, researcher!, reviewer!, "héllo", { maxMessageBytes: 5 }))).toBe("TEAM_MESSAGE_TOO_LARGE");
    expect(await rowsTo(reviewer!)).toBe(1);
    expect(await inbox(reviewer!)).toBe(1);

    // Pending = queued, or delivered and not yet consumed.
    const limits = { maxPending: 3 };
    const queued = await queueMessage(db, { teamId: team.teamId, sender: researcher!, target: implementer!, content: "m1" }, limits);
    const accepted = [
      await send(team, researcher!, implementer!, "m2", limits),
      await send(team, team.lead, implementer!, "m3", limits),
    ];
    expect(accepted.map((r) => r.status)).toEqual(["accepted", "accepted"]);
    const full = await send(team, team.lead, implementer!, "m4", limits).catch((e: unknown) => e);
    expect(isAppError(full, "TEAM_MAILBOX_FULL")).toBe(true);
    expect(full).toMatchObject({ details: { target: "implementer", pending: 3, maxPending: 3 } });
    expect(await rowsTo(implementer!)).toBe(3);
    expect(await inbox(implementer!)).toBe(3); // m1 was delivered along with m2
    // The default limit is 64.
    expect(await code(send(team, team.lead, implementer!, "m4"))).toBe("resolved");
    expect(await rowsTo(implementer!)).toBe(4);

    // Consumption frees the places.
    await startRuntime();
    const ids = [queued.messageId, ...accepted.map((r) => r.messageId)];
    await waitConsumed(ids);
    await waitFor(async () => (await inbox(implementer!)) === 0 && (await inbox(reviewer!)) === 0, WAIT_MS, "inboxes drained");
    expect((await send(team, team.lead, implementer!, "m5", limits)).status).toBe("accepted");
    expect(await total()).toBe(6);
  });
});

// ---------------------------------------------------------------- temporary failure and recovery

describe("temporary delivery failure", () => {
  it("returns queued when the target's inbox cannot be reached, and recovery delivers it exactly once", { timeout: TEST_TIMEOUT }, async () => {
    // The failure: another transaction holds the target's session row FOR UPDATE (every inbox
    // admission locks it, at least through the item's foreign key), and delivery gives up after
    // its lock_timeout. Step 1 never touches that row,
    // so the queued row commits; nothing is admitted until the lock is released.
    const team = await newTeam("researcher", "implementer");
    const target = team.m.implementer!;
    const logs: string[] = [];
    const locker = new pg.Client({ connectionString: directUrlOf(tdb) });
    locker.on("error", () => undefined);
    await locker.connect();
    // The room hears of the row left queued (the queued row's own commit notifies nothing).
    const listener = new pg.Client({ connectionString: directUrlOf(tdb) });
    await listener.connect();
    const roomHeard = new Promise<void>((resolve) =>
      listener.on("notification", (n) => {
        const payload = JSON.parse(n.payload ?? "{}") as { s?: string; k?: string };
        if (payload.s === team.teamId && payload.k === "mail") resolve();
      }),
    );
    await listener.query(`LISTEN ${ACTIVITY_CHANNEL}`);
    let res: SendResult;
    try {
      await locker.query("BEGIN");
      await locker.query("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", [target.sessionId]);
      res = await send(team, team.m.researcher!, target, "retry me later", { deliveryLockTimeoutMs: 200, log: (l) => logs.push(l) });
      expect(res.status).toBe("queued");
      await roomHeard;
      expect(logs.join("\n")).toMatch(/failed, left queued: [\s\S]*lock timeout/);
      const row = await db.teamMessage.findUniqueOrThrow({ where: { id: res.messageId } });
      expect(row).toMatchObject({ state: "queued", deliveredAt: null, consumedAt: null });
      expect((await listMessages(db, team.teamId)).map((v) => v.state)).toEqual(["queued"]);
      expect(await listInbox(db, target.sessionId)).toEqual([]);
      // Still unreachable: recovery leaves it queued.
      expect(await recoverMailbox(db, { deliveryLockTimeoutMs: 200, log: (l) => logs.push(l) })).toBe(0);
      expect(logs.at(-1)).toMatch(/recovery could not deliver the mail of/);
      expect((await db.teamMessage.findUniqueOrThrow({ where: { id: res.messageId } })).state).toBe("queued");
    } finally {
      await locker.query("ROLLBACK").catch(() => undefined);
      await locker.end().catch(() => undefined);
      await listener.end().catch(() => undefined);
    }

    expect(await recoverMailbox(db)).toBe(1);
    expect(await recoverMailbox(db)).toBe(0);
    expect(await deliverPending(db, target.sessionId)).toBe(0);
    expect((await listInbox(db, target.sessionId)).map((i) => i.id)).toEqual([res.messageId]);
    expect((await listMessages(db, team.teamId)).map((v) => v.state)).toEqual(["delivered"]);

    await startRuntime();
    await expectConsumedOnceInOrder(target.sessionId, [res.messageId]);
  });

  it("recovery delivers a backlog larger than one delivery batch (500) completely, in seq order", { timeout: TEST_TIMEOUT }, async () => {
    const team = await newTeam("a", "b", "c", "d", "implementer");
    const target = team.m.implementer!;
    const queuers = ["a", "b", "c", "d"].map((n) => team.m[n]!);
    await Promise.all(
      queuers.map(async (sender) => {
        for (let k = 0; k < 150; k++) {
          await queueMessage(db, { teamId: team.teamId, sender, target, content: `${sender.name} ${k}` }, { maxPending: 10_000 });
        }
      }),
    );
    const bySeq = (await db.teamMessage.findMany({ where: { targetSessionId: target.sessionId }, orderBy: { seq: "asc" } })).map((r) => r.id);
    expect(bySeq).toHaveLength(600);
    expect(await recoverMailbox(db)).toBe(600); // two transactions: 500 + 100
    expect((await listInbox(db, target.sessionId)).map((i) => i.id)).toEqual(bySeq);
    expect(await db.teamMessage.count({ where: { targetSessionId: target.sessionId, state: "queued" } })).toBe(0);

    await startRuntime();
    await expectConsumedOnceInOrder(target.sessionId, bySeq);
  });

  it("marks a row whose id already is in the target's inbox or history delivered, without admitting it again", { timeout: TEST_TIMEOUT }, async () => {
    // The crash window between inbox insertion and acknowledgement, made by hand: the row is
    // set back to queued while its message sits in the inbox, then while it is in history.
    const team = await newTeam("implementer");
    const target = team.m.implementer!;
    const res = await send(team, team.lead, target, "exactly once");
    expect(res.status).toBe("accepted");

    await db.teamMessage.update({ where: { id: res.messageId }, data: { state: "queued", deliveredAt: null } });
    expect(await deliverPending(db, target.sessionId)).toBe(1);
    expect((await listInbox(db, target.sessionId)).map((i) => i.id)).toEqual([res.messageId]);
    expect((await db.teamMessage.findUniqueOrThrow({ where: { id: res.messageId } })).state).toBe("delivered");

    const rt = await startRuntime();
    await expectConsumedOnceInOrder(target.sessionId, [res.messageId]);
    await stopRuntime(rt);

    await db.teamMessage.update({ where: { id: res.messageId }, data: { state: "queued", deliveredAt: null, consumedAt: null } });
    expect(await recoverMailbox(db)).toBe(1);
    // (Stopping the runtime may have left a resume notice there; the message itself is not.)
    expect((await listInbox(db, target.sessionId)).map((i) => i.id)).not.toContain(res.messageId);
    const row = await db.teamMessage.findUniqueOrThrow({ where: { id: res.messageId } });
    expect(row).toMatchObject({ state: "delivered", deliveredAt: expect.any(Date), consumedAt: expect.any(Date) });
    expect(countMessage(await eventsOf(db, target.sessionId), res.messageId)).toBe(1);
  });
});

// ---------------------------------------------------------------- crash windows (real processes)

interface MailboxChild {
  proc: ChildProcess;
  ownerId: string;
  lines: string[];
  stderr: string[];
  /** Writes one command and resolves with its answer line (OK …, QUEUED …, ERR …). */
  command(op: "send" | "queue" | "send-hang", input: unknown): Promise<string>;
  kill(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function spawnMailboxChild(env: Record<string, string>): Promise<MailboxChild> {
  const proc = spawn(process.execPath, ["--import", "tsx", "server/testing/mailbox-process.ts"], {
    cwd: REPO_ROOT,
    env: { NODE_ENV: "test", PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...databaseEnv(tdb), ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const stderr: string[] = [];
  const answers: ((line: string) => void)[] = [];
  let onReady: ((id: string) => void) | null = null;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once("exit", (code, signal) => resolve({ code, signal })),
  );
  let done = false;
  void exited.then(() => (done = true));
  createInterface({ input: proc.stdout! }).on("line", (line) => {
    lines.push(line);
    if (line.startsWith("READY ")) onReady?.(line.slice(6));
    else if (/^(OK|QUEUED|ERR) /.test(line)) answers.shift()?.(line);
  });
  createInterface({ input: proc.stderr! }).on("line", (line) => stderr.push(line));
  proc.stdin!.on("error", () => undefined);

  const child: MailboxChild = {
    proc,
    ownerId: "",
    lines,
    stderr,
    command(op, input) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer to ${op}: ${stderr.join("\n")}`)), WAIT_MS);
        answers.push((line) => {
          clearTimeout(timer);
          resolve(line);
        });
        proc.stdin!.write(`${JSON.stringify({ op, input })}\n`);
      });
    },
    async kill() {
      if (!done) proc.kill("SIGKILL");
      const r = await exited;
      children.delete(child);
      return r;
    },
  };
  children.add(child);
  child.ownerId = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`mailbox process not READY: ${stderr.join("\n")}`)), WAIT_MS);
    onReady = (id) => {
      clearTimeout(timer);
      resolve(id);
    };
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`mailbox process exited before READY (${code ?? signal}): ${stderr.join("\n")}`));
    });
  });
  return child;
}

function sendInput(team: TestTeam, sender: MemberRef, target: MemberRef, content: string) {
  return { teamId: team.teamId, sender, target, content };
}

function okResult(line: string): SendResult {
  expect(line).toMatch(/^OK /);
  return JSON.parse(line.slice(3)) as SendResult;
}

async function killed(child: MailboxChild) {
  const exit = await child.kill();
  expect(exit.signal).toBe("SIGKILL");
}

describe("crash windows (SIGKILL)", () => {
  it("(a) after the queued row committed, before delivery: recovery delivers it once, in order", { timeout: TEST_TIMEOUT }, async () => {
    const team = await newTeam("researcher", "implementer");
    const target = team.m.implementer!;
    const child = await spawnMailboxChild({});
    const m1 = okResult(await child.command("send", sendInput(team, team.m.researcher!, target, "one")));
    expect(m1.status).toBe("accepted");
    const hung = await child.command("send-hang", sendInput(team, team.m.researcher!, target, "two"));
    expect(hung).toMatch(/^QUEUED msg_/);
    const m2 = hung.slice("QUEUED ".length);
    await killed(child);

    // The process died between step 1 and step 2.
    const rows = await messageRows([m1.messageId, m2]);
    expect(rows.get(m1.messageId)).toMatchObject({ state: "delivered", consumedAt: null });
    expect(rows.get(m2)).toMatchObject({ state: "queued", deliveredAt: null, consumedAt: null });
    expect((await listInbox(db, target.sessionId)).map((i) => i.id)).toEqual([m1.messageId]);

    // Restart: a new runtime and the mailbox recovery.
    await startRuntime();
    expect(await recoverMailbox(db)).toBe(1);
    const m3 = await send(team, team.lead, target, "three");
    expect(m3.status).toBe("accepted");
    const events = await expectConsumedOnceInOrder(target.sessionId, [m1.messageId, m2, m3.messageId]);
    expect(teamMessages(events).map((p) => p.source.kind === "team" && p.source.senderName)).toEqual(["researcher", "researcher", "lead"]);
    expect(await recoverMailbox(db)).toBe(0);
  });

  it("(b) after delivery, before the target consumed it: nothing is redelivered, the target consumes it once", { timeout: TEST_TIMEOUT }, async () => {
    const team = await newTeam("researcher", "implementer");
    const target = team.m.implementer!;
    const child = await spawnMailboxChild({});
    const sent = [
      okResult(await child.command("send", sendInput(team, team.m.researcher!, target, "alpha"))),
      okResult(await child.command("send", sendInput(team, team.lead, target, "beta"))),
    ];
    expect(sent.map((r) => r.status)).toEqual(["accepted", "accepted"]);
    await killed(child);

    const ids = sent.map((r) => r.messageId);
    const rows = await messageRows(ids);
    for (const id of ids) expect(rows.get(id)).toMatchObject({ state: "delivered", deliveredAt: expect.any(Date), consumedAt: null });
    expect((await listInbox(db, target.sessionId)).map((i) => i.id)).toEqual(ids);
    expect(await eventsOf(db, target.sessionId)).toEqual([]);

    await startRuntime();
    expect(await recoverMailbox(db)).toBe(0);
    expect(await deliverPending(db, target.sessionId)).toBe(0);
    const events = await expectConsumedOnceInOrder(target.sessionId, ids);
    expect(turnEnds(await waitForTurns(db, target.sessionId, 1, WAIT_MS)).map((t) => t.reason)).toEqual(["completed"]);
    expect(new Set(ids.map((id) => turnOfMessage(events, id))).size).toBe(1);
  });

  it("(c) mid-turn of the target: consumed mail stays consumed, delivered and queued mail is consumed once after restart", { timeout: TEST_TIMEOUT }, async () => {
    const team = await newTeam("researcher", "implementer");
    const target = team.m.implementer!;
    // The child hosts the runtime that drives the target (and the senders); ~75 words at
    // 60 ms a chunk keeps the first step streaming for seconds.
    const child = await spawnMailboxChild({ MAILBOX_RUNTIME: "1", SCRIPTED_MODEL_DELAY_MS: "60", AGENT_LEASE_TTL_MS: "1000" });
    expect(child.ownerId).toMatch(/^proc-/);
    const m1 = okResult(await child.command("send", sendInput(team, team.m.researcher!, target, "Please describe the retry policy")));
    expect(m1.status).toBe("accepted");
    await waitFor(() => hasDeltas(target.sessionId), WAIT_MS, "the target's turn streaming in the child");
    const m2 = okResult(await child.command("send", sendInput(team, team.lead, target, "And keep it short")));
    expect(m2.status).toBe("accepted");
    const hung = await child.command("send-hang", sendInput(team, team.m.researcher!, target, "One more detail"));
    const m3 = hung.slice("QUEUED ".length);
    await killed(child);

    // At the kill: m1 consumed in the open turn, m2 in the inbox, m3 only queued.
    const crashed = await db.session.findUniqueOrThrow({ where: { id: target.sessionId }, select: { activeTurnId: true, leaseOwner: true } });
    expect(crashed).toMatchObject({ activeTurnId: expect.any(String), leaseOwner: child.ownerId });
    expect(turnEnds(await eventsOf(db, target.sessionId))).toEqual([]);
    const rows = await messageRows([m1.messageId, m2.messageId, m3]);
    expect(rows.get(m1.messageId)).toMatchObject({ state: "delivered", consumedAt: expect.any(Date) });
    expect(rows.get(m2.messageId)).toMatchObject({ state: "delivered", consumedAt: null });
    expect(rows.get(m3)).toMatchObject({ state: "queued", deliveredAt: null });
    expect((await listInbox(db, target.sessionId)).map((i) => i.id)).toEqual([m2.messageId]);

    const rt = await startRuntime({ config: { leaseTtlMs: 1_000, recoveryIntervalMs: 200 } });
    expect(await recoverMailbox(db)).toBe(1);
    const ids = [m1.messageId, m2.messageId, m3];
    const events = await expectConsumedOnceInOrder(target.sessionId, ids);
    const ends = turnEnds(await waitForTurns(db, target.sessionId, 2, WAIT_MS));
    expect(ends.map((t) => t.reason)).toEqual(["interrupted", "completed"]);
    expect(ends[0]!.turnId).toBe(crashed.activeTurnId);
    expect(turnOfMessage(events, m1.messageId)).toBe(ends[0]!.turnId);
    expect(turnOfMessage(events, m2.messageId)).toBe(ends[1]!.turnId);
    expect(turnOfMessage(events, m3)).toBe(ends[1]!.turnId);
    // m1's consumption is the one recorded before the crash.
    expect((await messageRows([m1.messageId])).get(m1.messageId)!.consumedAt).toEqual(rows.get(m1.messageId)!.consumedAt);
    expect(rt.logs.some((l) => l.includes("left open by a crash"))).toBe(true);
    expect(await recoverMailbox(db)).toBe(0);
  });
});

// ---------------------------------------------------------------- concurrency

describe("many concurrent senders", () => {
  it("16 senders x 200 messages to one target: nothing lost or duplicated, per-sender order kept, seq order = delivery order", { timeout: 300_000 }, async () => {
    const SENDERS = 16;
    const PER_SENDER = 200;
    const names = Array.from({ length: SENDERS }, (_, i) => `sender-${i}`);
    const team = await newTeam(...names, "target");
    const target = team.m.target!;
    await startRuntime({ config: { maxStepsPerTurn: 100_000 } });
    const senderDb = createDb(tdb, SENDERS);
    const results = new Map<string, SendResult[]>();
    const logs: string[] = [];
    try {
      await Promise.all(
        names.map(async (name) => {
          const list: SendResult[] = [];
          results.set(name, list);
          for (let k = 0; k < PER_SENDER; k++) {
            list.push(
              await sendMessage(
                senderDb,
                { teamId: team.teamId, sender: team.m[name]!, target, content: `${name} #${k}` },
                { maxPending: 100_000, log: (l) => logs.push(l) },
              ),
            );
          }
        }),
      );
    } finally {
      await senderDb.$disconnect();
    }
    const all = [...results.values()].flat();
    expect(all).toHaveLength(SENDERS * PER_SENDER);
    expect(new Set(all.map((r) => r.messageId)).size).toBe(all.length);
    // Every send was admitted by its own call (or a concurrent one) — none was left queued.
    expect(all.filter((r) => r.status !== "accepted")).toEqual([]);
    expect(logs).toEqual([]);
    expect(await recoverMailbox(db)).toBe(0);

    const rows = await db.teamMessage.findMany({ where: { targetSessionId: target.sessionId }, orderBy: { seq: "asc" } });
    expect(rows).toHaveLength(all.length);
    const bySeq = rows.map((r) => r.id);
    await waitFor(
      async () => (await db.teamMessage.count({ where: { targetSessionId: target.sessionId, consumedAt: null } })) === 0,
      240_000,
      "all messages consumed",
    );
    const events = await eventsOf(db, target.sessionId);
    const history = teamMessages(events);
    // Nothing lost, nothing duplicated.
    expect(history).toHaveLength(all.length);
    expect(new Set(history.map((p) => p.messageId)).size).toBe(all.length);
    // Delivery order (= inbox order = history order) is seq order.
    expect(history.map((p) => p.messageId)).toEqual(bySeq);
    const delivered = (await db.teamMessage.findMany({ where: { targetSessionId: target.sessionId }, orderBy: { seq: "asc" } })).map(
      (r) => r.deliveredAt!.getTime(),
    );
    for (let i = 1; i < delivered.length; i++) expect(delivered[i]!).toBeGreaterThanOrEqual(delivered[i - 1]!);
    // Per-sender order: each sender's messages appear in the order it sent them, with its name.
    for (const name of names) {
      const sentIds = results.get(name)!.map((r) => r.messageId);
      const seen = history.filter((p) => p.source.kind === "team" && p.source.senderName === name);
      expect(seen.map((p) => p.messageId)).toEqual(sentIds);
      expect(seen.map((p) => p.text.split("\n")[1])).toEqual(sentIds.map((_, k) => `${name} #${k}`));
      expect(seen.every((p) => p.source.kind === "team" && p.source.senderSessionId === team.m[name]!.sessionId)).toBe(true);
    }
    expect(await listInbox(db, asSessionId(target.sessionId))).toEqual([]);
  });
});

// ---------------------------------------------------------------- batched delivery

describe("batched delivery per target", () => {
  /** The transaction that wrote each row's current version (xmin): one id means one transaction. */
  async function writers(table: "team_messages" | "inbox_items", ids: string[]): Promise<string[]> {
    const rows = await db.$queryRawUnsafe<{ xid: string }[]>(
      `SELECT DISTINCT xmin::text AS xid FROM ${table} WHERE id = ANY($1::text[])`,
      ids,
    );
    return rows.map((r) => r.xid);
  }

  it("delivers a backlog of 60 queued messages to one target in one transaction, in seq order, exactly once", { timeout: TEST_TIMEOUT }, async () => {
    const team = await newTeam("a", "b", "c", "implementer");
    const target = team.m.implementer!;
    const queuers = ["a", "b", "c"].map((n) => team.m[n]!);
    await Promise.all(
      queuers.map(async (sender) => {
        for (let k = 0; k < 20; k++) await queueMessage(db, { teamId: team.teamId, sender, target, content: `${sender.name} ${k}` });
      }),
    );
    const bySeq = (await db.teamMessage.findMany({ where: { targetSessionId: target.sessionId }, orderBy: { seq: "asc" } })).map((r) => r.id);
    expect(bySeq).toHaveLength(60);

    expect(await deliverPending(db, target.sessionId)).toBe(60);
    expect(await deliverPending(db, target.sessionId)).toBe(0);
    // One transaction marked every row and admitted every item, with one delivery stamp.
    const [xid] = await writers("team_messages", bySeq);
    expect(await writers("team_messages", bySeq)).toEqual([xid]);
    expect(await writers("inbox_items", bySeq)).toEqual([xid]);
    const rows = await messageRows(bySeq);
    expect(new Set(bySeq.map((id) => rows.get(id)!.deliveredAt!.getTime())).size).toBe(1);
    // Inbox order is seq order; each item is the message as teamMessageText writes it.
    const inbox = await listInbox(db, target.sessionId);
    expect(inbox.map((i) => i.id)).toEqual(bySeq);
    for (const item of inbox) {
      const row = rows.get(item.id)!;
      expect(item).toMatchObject({ mode: "steer", text: teamMessageText(row.id, row.senderName, row.content) });
      expect(item.source).toEqual({ kind: "team", teamId: team.teamId, messageId: row.id, senderSessionId: row.senderSessionId, senderName: row.senderName });
    }

    await startRuntime({ config: { maxStepsPerTurn: 1_000 } });
    await expectConsumedOnceInOrder(target.sessionId, bySeq);
  });

  it("concurrent deliverers of one target deliver each message once, all in one transaction", { timeout: TEST_TIMEOUT }, async () => {
    const team = await newTeam("researcher", "implementer");
    const target = team.m.implementer!;
    const queued = [];
    for (let k = 0; k < 12; k++) queued.push((await queueMessage(db, { teamId: team.teamId, sender: team.m.researcher!, target, content: `m${k}` })).messageId);

    // The window: a transaction holds the target's session row, so the first deliverer waits
    // there (holding the target's lock) and the others wait for the target's lock.
    const locker = new pg.Client({ connectionString: directUrlOf(tdb) });
    locker.on("error", () => undefined);
    await locker.connect();
    const deliverers = Array.from({ length: 4 }, () => createDb(tdb, 1));
    try {
      await locker.query("BEGIN");
      await locker.query("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", [target.sessionId]);
      const counts = Promise.all(deliverers.map((d) => deliverPending(d, target.sessionId, { deliveryLockTimeoutMs: WAIT_MS })));
      await waitFor(
        async () => {
          // Not on the locker's connection: pg_stat_activity is a snapshot per transaction, and
          // the locker's would miss deliverers that connected after its first look.
          const [counts] = await db.$queryRaw<{ advisory: number; row: number }[]>`
            SELECT count(*) FILTER (WHERE locktype = 'advisory')::int AS advisory,
                   count(*) FILTER (WHERE locktype IN ('tuple', 'transactionid'))::int AS row
              FROM pg_locks WHERE NOT granted AND pid IN (SELECT pid FROM pg_stat_activity WHERE datname = current_database())`;
          return counts!.advisory === 3 && counts!.row >= 1;
        },
        WAIT_MS,
        "one deliverer at the session row, three at the target's lock",
      );
      await locker.query("ROLLBACK");
      expect((await counts).sort((a, b) => b - a)).toEqual([12, 0, 0, 0]);
    } finally {
      await locker.query("ROLLBACK").catch(() => undefined);
      await locker.end().catch(() => undefined);
      await Promise.all(deliverers.map((d) => d.$disconnect()));
    }
    expect((await listInbox(db, target.sessionId)).map((i) => i.id)).toEqual(queued);
    expect(await writers("inbox_items", queued)).toHaveLength(1);
    expect(await db.teamMessage.count({ where: { targetSessionId: target.sessionId, state: "queued" } })).toBe(0);
  });

  it("the delivery and pending-count queries use the partial indexes", { timeout: TEST_TIMEOUT }, async () => {
    // A seeded table where most rows are long consumed: the planner must reach a target's few
    // queued or unconsumed rows through the partial indexes. (The query shapes of deliverBatch
    // and queueMessage.)
    const team = await newTeam("researcher", "implementer", "reviewer");
    const target = team.m.implementer!;
    await db.$executeRaw`INSERT INTO team_messages (id, team_id, sender_session_id, sender_name, target_session_id, target_name, content, state, delivered_at, consumed_at)
      SELECT 'seed-' || g, ${team.teamId}, ${team.m.researcher!.sessionId}, 'researcher',
             CASE WHEN g % 2 = 0 THEN ${target.sessionId} ELSE ${team.m.reviewer!.sessionId} END,
             'x', 'old news', 'delivered', now(), now()
      FROM generate_series(1, 20000) g`;
    for (let k = 0; k < 3; k++) await queueMessage(db, { teamId: team.teamId, sender: team.m.researcher!, target, content: `new ${k}` });
    await db.$executeRawUnsafe("ANALYZE team_messages");
    const plan = async (query: string, ...params: string[]) =>
      (await db.$queryRawUnsafe<{ "QUERY PLAN": string }[]>(`EXPLAIN ${query}`, ...params)).map((r) => r["QUERY PLAN"]).join("\n");
    expect(
      await plan(`SELECT m.id FROM team_messages m WHERE m.target_session_id = $1 AND m.state = 'queued' ORDER BY m.seq LIMIT 500`, target.sessionId),
    ).toMatch(/Index Scan using team_messages_target_queued_idx/);
    expect(await plan(`SELECT count(*) FROM team_messages WHERE target_session_id = $1 AND consumed_at IS NULL`, target.sessionId)).toMatch(
      /Index (Only )?Scan using team_messages_target_unconsumed_idx/,
    );
    expect(await plan(`SELECT target_session_id FROM team_messages WHERE state = 'queued' GROUP BY target_session_id ORDER BY min(seq)`)).toMatch(
      /team_messages_target_queued_idx/,
    );
    expect(await deliverPending(db, target.sessionId)).toBe(3);
  });
});
