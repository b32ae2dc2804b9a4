import { abortableWait, abortError } from "../../abortable";
import { TRPCError } from "@trpc/server";
import { getErrorShape } from "@trpc/server/unstable-core-do-not-import";
import { afterAll, afterEach, beforeEach, describe, expect, onTestFailed } from "vitest";
import { ZodError } from "zod";
import { parseEnv } from "../../env";
import { AppError, type AppErrorCode } from "../../errors";
import { asSessionId, type SessionId } from "../../ids";
import { defaultPlaybook, ScriptedModel } from "../../models/scripted";
import type { LanguageModel } from "../../models/types";
import type { SessionEvent } from "../../runtime/events";
import { listInbox } from "../../testing/inbox";
import { runtimeTest } from "../../testing/fixtures";
import {
  eventsOf,
  kinds,
  newTestSession,
  turnEnds,
  waitFor,
  waitForTurns,
  type TestRuntime,
} from "../../testing/runtime-harness";
import type { Person } from "../../people/person";
import { createTestPerson } from "../../testing/people";
import type { TrpcContext } from "../init";
import { appRouter, createCaller } from "../root";
import type { SessionLiveMessage as LiveMessage } from "../../live/feed-readers";

// The session router called in-process through createCaller, against a real runtime and a real
// Postgres: validation and error mapping, the transcript pages, queue controls, Stop, fork and
// the resumable live feed.

let rt: TestRuntime;
let ctx: TrpcContext;
let ana: Person;
let caller: ReturnType<typeof createCaller>;

// One runtime per file (recovery sweeps the whole database, so a second runtime would compete
// for sessions). Its model is the keyless scripted one, streaming instantly unless a test
// paces it (`paceMs` between chunks, so deltas get flushed) or holds it: while held, every
// reply stops after its first chunk until `releaseModel()` (or an abort). Holding keeps a turn
// "in flight" for exactly as long as a test needs, however slow the machine is.
const scripted = new ScriptedModel({ delayMs: 0 });
let paceMs = 0;
let hold: { promise: Promise<void>; release: () => void } | null = null;

function holdModel() {
  let release!: () => void;
  const promise = new Promise<void>((r) => (release = r));
  hold = { promise, release };
}
function releaseModel() {
  hold?.release();
  hold = null;
}

async function abortable(p: Promise<void>, signal: AbortSignal): Promise<void> {
  if ((await abortableWait({ until: p, signal })) === "aborted") throw abortError();
}

const model: LanguageModel = {
  id: scripted.id,
  async *stream(request, signal) {
    let first = true;
    for await (const chunk of scripted.stream(request, signal)) {
      if (!first) {
        if (paceMs > 0) await abortable(new Promise((r) => setTimeout(r, paceMs)), signal);
        while (hold) await abortable(hold.promise, signal);
      }
      first = false;
      yield chunk;
    }
  },
};

const it = runtimeTest({ resolveModel: () => model });
// The file's runtime (a fixture), bound once for the helpers below and the tests.
it.beforeAll(async ({ rt: fileRuntime }) => {
  rt = fileRuntime;
  ana = await createTestPerson(rt.db, "Ana");
  ctx = { db: rt.db, env: parseEnv(env({})), hub: rt.hub, runtime: rt.runtime, person: ana };
  caller = createCaller(ctx);
});
beforeEach(() => {
  // On failure, show what the runtime saw: agents needing a driver, leases, and its log
  // (it only logs what went wrong: crashes, lost leases, failed sweeps).
  const from = rt.logs.length;
  onTestFailed(async () => {
    const rows = await rt.db.session.findMany({
      where: { OR: [{ activeTurnId: { not: null } }, { inbox: { some: {} } }, { leaseOwner: { not: null } }] },
      select: { id: true, status: true, activeTurnId: true, parked: true, leaseOwner: true, leaseExpiresAt: true },
    });
    console.error(
      `owner ${rt.runtime.ownerId}, resident ${JSON.stringify(rt.runtime.residentIds())}, at ${new Date().toISOString()}\n` +
        `${JSON.stringify(rows, null, 1)}\nruntime log:\n${rt.logs.slice(from).join("\n") || "(empty)"}`,
    );
  });
});
afterEach(() => {
  paceMs = 0;
  releaseModel();
});
// Before the fixtures' teardown stops the runtime: a held reply would keep its turn open.
afterAll(() => {
  releaseModel();
});

// ---------------------------------------------------------------------------------------------
// helpers

/** The rejection of `p`, which must be a TRPCError. */
async function trpcError(p: Promise<unknown>): Promise<TRPCError> {
  const outcome = await p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  if (outcome.ok) throw new Error(`expected a TRPCError, got ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(TRPCError);
  return outcome.error as TRPCError;
}

/** What the browser would see: the shape produced by the app's errorFormatter. */
function formatted(error: TRPCError, path: string) {
  return getErrorShape({ config: appRouter._def._config, error, type: "unknown", path, input: undefined, ctx });
}

/** A queue control on an item that is no longer queued: the typed NOT_FOUND naming it. */
const expectQueueItemGone = (call: Promise<unknown>, path: string) => expectAppError(call, "NOT_FOUND", "QUEUE_ITEM_NOT_FOUND", path);

async function expectAppError(p: Promise<unknown>, code: TRPCError["code"], appCode: AppErrorCode, path: string) {
  const error = await trpcError(p);
  expect(error.code).toBe(code);
  expect(error.cause).toBeInstanceOf(AppError);
  expect((error.cause as AppError).code).toBe(appCode);
  expect(formatted(error, path)).toMatchObject({ data: { code, appCode, zodError: null } });
  return error;
}

async function expectInvalidInput(p: Promise<unknown>, path: string) {
  const error = await trpcError(p);
  expect(error.code).toBe("BAD_REQUEST");
  expect(error.cause).toBeInstanceOf(ZodError);
  const shape = formatted(error, path);
  expect(shape).toMatchObject({ data: { code: "BAD_REQUEST", appCode: "INVALID_INPUT", httpStatus: 400, details: null } });
  expect(shape.data.zodError).not.toBeNull();
  return error;
}

/** An explicit environment (process.env is not consulted): no provider keys unless given. */
function env(vars: Record<string, string>): NodeJS.ProcessEnv {
  return vars as NodeJS.ProcessEnv;
}

/** Deliberately ill-typed input, to reach the runtime validation. */
function bad<T>(value: unknown): T {
  return value as T;
}

async function sessionRow(id: SessionId) {
  return rt.db.session.findUniqueOrThrow({ where: { id }, select: { activeTurnId: true, lastSeq: true } });
}

function turnIdOf(e: SessionEvent): string | undefined {
  return "turnId" in e.payload ? e.payload.turnId : undefined;
}

/** Events grouped per turn, in order. */
function turnsOf(events: SessionEvent[]): SessionEvent[][] {
  const turns: SessionEvent[][] = [];
  for (const e of events) {
    if (e.payload.kind === "turn_start") turns.push([]);
    turns.at(-1)?.push(e);
  }
  return turns;
}

function humanTexts(events: SessionEvent[]): string[] {
  return events.flatMap((e) => (e.payload.kind === "user_message" && e.payload.source.kind === "human" ? [e.payload.text] : []));
}

/** Waits until the driver has opened a turn for `id` and returns its turn_start event. */
async function waitForRunningTurn(id: SessionId, nth = 1): Promise<SessionEvent> {
  return waitFor(
    async () => {
      const row = await sessionRow(id);
      const starts = (await eventsOf(rt.db, id)).filter((e) => e.payload.kind === "turn_start");
      return row.activeTurnId && starts.length >= nth ? starts[nth - 1] : null;
    },
    10_000,
    `turn ${nth} of ${id} to be running`,
  );
}

type Envelope = { id: string; data: LiveMessage };

/** A live subscription read in the background; `close()` aborts it like a disconnecting client. */
async function subscribe(sessionId: SessionId, lastEventId: string | null) {
  const abort = new AbortController();
  const liveCaller = createCaller(ctx, { signal: abort.signal });
  const iterable = await liveCaller.session.live({ sessionId, lastEventId });
  const received: Envelope[] = [];
  let failure: unknown = null;
  const pump = (async () => {
    try {
      for await (const raw of iterable as AsyncIterable<unknown>) received.push(envelope(raw));
    } catch (e) {
      if (!abort.signal.aborted) failure = e;
    }
  })();
  return {
    received,
    events: () => received.flatMap((m) => (m.data.type === "events" ? m.data.events : [])),
    states: () => received.flatMap((m) => (m.data.type === "state" ? [m.data.state] : [])),
    failure: () => failure,
    async close() {
      abort.abort();
      await pump;
      expect(failure).toBeNull();
    },
  };
}

/** createCaller hands out tRPC's tracked envelopes (`[id, data, symbol]`); HTTP turns them into `{id, data}`. */
function envelope(raw: unknown): Envelope {
  if (Array.isArray(raw)) return { id: raw[0] as string, data: raw[1] as LiveMessage };
  return raw as Envelope;
}

function expectConsecutive(events: SessionEvent[], from: number, to: number) {
  expect(events.map((e) => e.seq)).toEqual(Array.from({ length: to - from + 1 }, (_, i) => from + i));
}

const UNKNOWN = asSessionId("ses_doesnotexist00000000");

// ---------------------------------------------------------------------------------------------

describe("create, list, get", () => {
  it("creates a session with the keyless scripted model by default, lists it and reads it", async () => {
    const created = await caller.session.create({ title: "  Picnic planning  " });
    expect(created).toMatchObject({
      title: "Picnic planning",
      model: { provider: "scripted", model: "keyless" },
      status: "inactive",
      lastSeq: 0,
      running: false,
      forkedFromId: null,
    });
    expect(created.id).toMatch(/^ses_/);

    const listed = await caller.session.list();
    expect(listed.map((s) => s.id)).toContain(created.id);
    expect(listed.find((s) => s.id === created.id)).toEqual(created);

    const got = await caller.session.get({ sessionId: created.id });
    expect(got).toEqual({ session: created, inbox: [] });

    expect(await caller.session.models()).toEqual([expect.objectContaining({ provider: "scripted", model: "keyless" })]);
  });

  it("refuses a provider the server has no key for (MODEL_UNAVAILABLE) and persists nothing", async () => {
    const before = await rt.db.session.count();
    await expectAppError(
      caller.session.create({ title: "claude", model: { provider: "anthropic", model: "claude-sonnet-4-5" } }),
      "BAD_REQUEST",
      "MODEL_UNAVAILABLE",
      "session.create",
    );
    await expectAppError(
      caller.session.create({ title: "oai", model: { provider: "openai-compatible", model: "gpt-4o-mini" } }),
      "BAD_REQUEST",
      "MODEL_UNAVAILABLE",
      "session.create",
    );
    await expectAppError(
      caller.session.create({ title: "other script", model: { provider: "scripted", model: "not-keyless" } }),
      "BAD_REQUEST",
      "MODEL_UNAVAILABLE",
      "session.create",
    );
    expect(await rt.db.session.count()).toBe(before);

    // The refusal is about configuration: with a key the same choice is accepted.
    const keyed = createCaller({ ...ctx, env: parseEnv(env({ ANTHROPIC_API_KEY: "sk-test" })) });
    const created = await keyed.session.create({ title: "claude", model: { provider: "anthropic", model: "claude-sonnet-4-5" } });
    expect(created.model).toEqual({ provider: "anthropic", model: "claude-sonnet-4-5" });
  });

  it("rejects invalid create and list input as BAD_REQUEST with the zod issues", async () => {
    await expectInvalidInput(caller.session.create({ title: "   " }), "session.create");
    await expectInvalidInput(caller.session.create({ title: "x".repeat(201) }), "session.create");
    await expectInvalidInput(caller.session.list({ limit: 0 }), "session.list");
  });
});

describe("invalid input", () => {
  let id: SessionId;
  beforeEach(async () => {
    id = await newTestSession(rt.db, "test", ana);
  });

  async function expectNothingPersisted() {
    expect(await listInbox(rt.db, id)).toEqual([]);
    expect(await eventsOf(rt.db, id)).toEqual([]);
    expect((await sessionRow(id)).lastSeq).toBe(0);
  }

  it("rejects an empty or blank prompt", async () => {
    const e1 = await expectInvalidInput(caller.session.prompt({ sessionId: id, text: "" }), "session.prompt");
    const e2 = await expectInvalidInput(caller.session.prompt({ sessionId: id, text: " \n\t " }), "session.prompt");
    for (const e of [e1, e2]) {
      expect((e.cause as ZodError).issues).toEqual([expect.objectContaining({ path: ["text"], message: "Prompt is empty" })]);
    }
    await expectNothingPersisted();
  });

  it("rejects a prompt over 64 KiB", async () => {
    const e = await expectInvalidInput(caller.session.prompt({ sessionId: id, text: "x".repeat(65_537) }), "session.prompt");
    expect((e.cause as ZodError).issues).toEqual([expect.objectContaining({ path: ["text"], message: "Prompt is larger than 64 KiB" })]);
    // The limit is in bytes: 21,846 three-byte characters are 65,538 bytes.
    await expectInvalidInput(caller.session.prompt({ sessionId: id, text: "€".repeat(21_846) }), "session.prompt");
    await expectNothingPersisted();
  });

  it("rejects a session id of the wrong type or length", async () => {
    await expectInvalidInput(caller.session.prompt({ sessionId: bad<string>(42), text: "hello" }), "session.prompt");
    await expectInvalidInput(caller.session.prompt({ sessionId: "", text: "hello" }), "session.prompt");
    await expectInvalidInput(caller.session.get({ sessionId: bad<string>(null) }), "session.get");
    await expectInvalidInput(caller.session.transcript({ sessionId: "s".repeat(65) }), "session.transcript");
    await expectNothingPersisted();
  });

  it("rejects bad paging, fork points and resume ids", async () => {
    await expectInvalidInput(caller.session.transcript({ sessionId: id, limit: 0 }), "session.transcript");
    await expectInvalidInput(caller.session.transcript({ sessionId: id, beforeSeq: 0 }), "session.transcript");
    await expectInvalidInput(caller.session.fork({ sessionId: id, throughSeq: 1.5 }), "session.fork");
    await expectInvalidInput(caller.session.live({ sessionId: id, lastEventId: "-1" }), "session.live");
    await expectInvalidInput(caller.session.editQueued({ sessionId: id, itemId: "msg_x", text: "" }), "session.editQueued");
    expect(await rt.db.session.count({ where: { forkedFromId: id } })).toBe(0);
    await expectNothingPersisted();
  });

  it("accepts a prompt of exactly 64 KiB", async () => {
    const item = await caller.session.prompt({ sessionId: id, text: "y".repeat(65_536) });
    expect(item.text).toHaveLength(65_536);
    await waitForTurns(rt.db, id, 1);
  });
});

describe("an unknown session", () => {
  it("is NOT_FOUND (SESSION_NOT_FOUND) for get, prompt, stop, transcript and fork", async () => {
    const sessionId = UNKNOWN;
    await expectAppError(caller.session.get({ sessionId }), "NOT_FOUND", "SESSION_NOT_FOUND", "session.get");
    await expectAppError(caller.session.prompt({ sessionId, text: "hi" }), "NOT_FOUND", "SESSION_NOT_FOUND", "session.prompt");
    await expectAppError(caller.session.stop({ sessionId }), "NOT_FOUND", "SESSION_NOT_FOUND", "session.stop");
    await expectAppError(caller.session.transcript({ sessionId }), "NOT_FOUND", "SESSION_NOT_FOUND", "session.transcript");
    await expectAppError(caller.session.fork({ sessionId }), "NOT_FOUND", "SESSION_NOT_FOUND", "session.fork");
    expect(await rt.db.inboxItem.count({ where: { sessionId } })).toBe(0);
  });

  it("is NOT_FOUND (SESSION_NOT_FOUND) for queue controls too: the access check comes first", async () => {
    const sessionId = UNKNOWN;
    const itemId = "msg_nothing";
    const gone = (p: Promise<unknown>, path: string) => expectAppError(p, "NOT_FOUND", "SESSION_NOT_FOUND", path);
    await gone(caller.session.editQueued({ sessionId, itemId, text: "x" }), "session.editQueued");
    await gone(caller.session.removeQueued({ sessionId, itemId }), "session.removeQueued");
    await gone(caller.session.steerNow({ sessionId, itemId }), "session.steerNow");
  });

  it("has no queued items to edit, remove or steer in a known session (QUEUE_ITEM_NOT_FOUND)", async () => {
    const sessionId = await newTestSession(rt.db, "no queue", ana);
    const itemId = "msg_nothing";
    const gone = (p: Promise<unknown>, path: string) => expectAppError(p, "NOT_FOUND", "QUEUE_ITEM_NOT_FOUND", path);
    await gone(caller.session.editQueued({ sessionId, itemId, text: "x" }), "session.editQueued");
    await gone(caller.session.removeQueued({ sessionId, itemId }), "session.removeQueued");
    await gone(caller.session.steerNow({ sessionId, itemId }), "session.steerNow");
    // A refusal records no action.
    expect(await rt.db.personAction.count({ where: { sessionId, action: { not: "team_created" } } })).toBe(0);
  });

  it("fails the live feed with NOT_FOUND (SESSION_NOT_FOUND)", async () => {
    // Whether it fails on the call or on the first read, the client must see NOT_FOUND.
    const read = (async () => {
      const iterable = await caller.session.live({ sessionId: UNKNOWN, lastEventId: null });
      for await (const _ of iterable as AsyncIterable<unknown>) throw new Error("no message expected");
    })();
    await expectAppError(read, "NOT_FOUND", "SESSION_NOT_FOUND", "session.live");
  });
});

describe("prompt and transcript", () => {
  it("returns the queued item, runs it as a turn and pages the transcript", async () => {
    const id = await newTestSession(rt.db, "test", ana);
    const item = await caller.session.prompt({ sessionId: id, text: "  What time is it in Europe/Paris?  " });
    expect(item).toMatchObject({
      mode: "queue",
      text: "What time is it in Europe/Paris?",
      source: { kind: "human", userId: ana.id, name: "Ana" },
    });
    expect(item.id).toMatch(/^msg_/);

    await waitForTurns(rt.db, id, 1);
    await caller.session.prompt({ sessionId: id, text: "Thanks!" });
    const all = await waitForTurns(rt.db, id, 2);
    const n = all.length;
    expect(n).toBeGreaterThan(10);
    expect(all.find((e) => e.payload.kind === "user_message" && e.payload.messageId === item.id)?.payload).toMatchObject({
      text: "What time is it in Europe/Paris?",
      source: { kind: "human", userId: ana.id, name: "Ana" },
    });
    expect(turnEnds(all).map((t) => t.reason)).toEqual(["completed", "completed"]);

    // Whole transcript: ascending, nothing before it.
    const full = await caller.session.transcript({ sessionId: id });
    expect(full.hasMore).toBe(false);
    expect(full.events).toEqual(all);

    // Newest page first.
    const newest = await caller.session.transcript({ sessionId: id, limit: 3 });
    expect(newest.events.map((e) => e.seq)).toEqual([n - 2, n - 1, n]);
    expect(newest.hasMore).toBe(true);

    // Paging backwards with beforeSeq covers everything exactly once.
    const seen: number[] = [];
    let beforeSeq: number | undefined;
    let pages = 0;
    for (;;) {
      const page = await caller.session.transcript({ sessionId: id, limit: 4, beforeSeq });
      pages += 1;
      const seqs = page.events.map((e) => e.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(page.hasMore).toBe(seqs[0]! > 1);
      seen.unshift(...seqs);
      if (!page.hasMore) break;
      beforeSeq = seqs[0];
      expect(pages).toBeLessThan(100);
    }
    expect(seen).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(pages).toBe(Math.ceil(n / 4));

    // A page exactly at the start, and one before it.
    const first = await caller.session.transcript({ sessionId: id, beforeSeq: 3, limit: 10 });
    expect(first).toEqual({ events: all.slice(0, 2), hasMore: false });
    // A full page that reaches seq 1 has nothing more, one that stops at 2 has.
    expect(await caller.session.transcript({ sessionId: id, beforeSeq: 3, limit: 2 })).toEqual(first);
    const second = await caller.session.transcript({ sessionId: id, beforeSeq: 4, limit: 2 });
    expect(second).toEqual({ events: all.slice(1, 3), hasMore: true });
    expect(await caller.session.transcript({ sessionId: id, beforeSeq: 1 })).toEqual({ events: [], hasMore: false });

    // The state now shows an empty inbox.
    const state = await caller.session.get({ sessionId: id });
    expect(state.inbox).toEqual([]);
    expect(state.session).toMatchObject({ lastSeq: n, running: false });
  });

  it("gives an empty transcript for a new session", async () => {
    const id = await newTestSession(rt.db, "test", ana);
    expect(await caller.session.transcript({ sessionId: id })).toEqual({ events: [], hasMore: false });
  });
});

describe("queue controls, stop and fork", () => {
  it("edits, removes and steers queued prompts while a turn runs", async () => {
    const id = await newTestSession(rt.db, "test", ana);
    holdModel(); // A's reply stays in flight until we let it go
    const a = await caller.session.prompt({ sessionId: id, text: "Write me a long plan for the garden" });
    const start = await waitForRunningTurn(id);
    const turnId = turnIdOf(start)!;

    const b = await caller.session.prompt({ sessionId: id, text: "B original" });
    const c = await caller.session.prompt({ sessionId: id, text: "C" });
    const queued = await caller.session.get({ sessionId: id });
    expect(queued.session.running).toBe(true);
    expect(queued.session.status).toBe("running");
    expect(queued.inbox.map((i) => i.id)).toEqual([b.id, c.id]);

    // Edit: text only, same id and position.
    const edited = await caller.session.editQueued({ sessionId: id, itemId: b.id, text: "  B edited  " });
    // The edit records who made it; the source keeps who wrote the prompt.
    expect(edited).toEqual({ ...b, text: "B edited", editedBy: { id: ana.id, name: "Ana" } });
    expect(b.editedBy).toBeNull();
    const afterEdit = await listInbox(rt.db, id);
    expect(afterEdit.map((i) => [i.id, i.position, i.text])).toEqual([
      [b.id, b.position, "B edited"],
      [c.id, c.position, "C"],
    ]);
    // The room's state shows the queued input exactly as listed, edit and all (one statement).
    expect((await caller.session.get({ sessionId: id })).inbox).toEqual(afterEdit);

    // Remove: gone; a second remove is a typed NOT_FOUND.
    expect(await caller.session.removeQueued({ sessionId: id, itemId: c.id })).toEqual({ removed: true });
    expect((await listInbox(rt.db, id)).map((i) => i.id)).toEqual([b.id]);
    await expectQueueItemGone(caller.session.removeQueued({ sessionId: id, itemId: c.id }), "session.removeQueued");
    await expectQueueItemGone(caller.session.editQueued({ sessionId: id, itemId: c.id, text: "again" }), "session.editQueued");

    // Steer now while A's turn is streaming: B joins that turn at its next step boundary.
    expect((await sessionRow(id)).activeTurnId).toBe(turnId);
    expect(await caller.session.steerNow({ sessionId: id, itemId: b.id })).toEqual({ steered: true });
    // No longer a queued prompt: queue controls on it are refused.
    await expectQueueItemGone(caller.session.steerNow({ sessionId: id, itemId: b.id }), "session.steerNow");
    await expectQueueItemGone(caller.session.editQueued({ sessionId: id, itemId: b.id, text: "too late" }), "session.editQueued");
    // A is mid-reply: its first words are streamed, the rest waits for the model.
    await waitFor(
      async () => (await eventsOf(rt.db, id)).some((e) => e.payload.kind === "assistant_delta"),
      10_000,
      "A streaming",
    );
    expect((await sessionRow(id)).activeTurnId).toBe(turnId);

    releaseModel();
    const events = await waitForTurns(rt.db, id, 1, 20_000);
    expect(turnEnds(events)).toEqual([{ kind: "turn_end", turnId, reason: "completed" }]);
    expect(new Set(events.map(turnIdOf).filter(Boolean))).toEqual(new Set([turnId]));
    expect(humanTexts(events)).toEqual(["Write me a long plan for the garden", "B edited"]);

    const aMsg = events.find((e) => e.payload.kind === "user_message" && e.payload.messageId === a.id)!;
    const bMsg = events.find((e) => e.payload.kind === "user_message" && e.payload.messageId === b.id)!;
    expect(bMsg.payload).toMatchObject({ text: "B edited", source: { kind: "human" } });
    const stepOfB = events.filter((e) => e.seq < bMsg.seq && e.payload.kind === "step_start").at(-1)!;
    expect(stepOfB.payload).toMatchObject({ kind: "step_start", turnId, step: 1 });
    expect(stepOfB.seq).toBeGreaterThan(aMsg.seq);
    // The step after the steer answered B.
    const replies = events.flatMap((e) => (e.payload.kind === "assistant_message" ? [e.payload] : []));
    expect(replies.map((r) => r.step)).toEqual([0, 1]);
    expect(replies[1]!.text).toContain("B edited");

    // C never ran, nothing is left behind, and no second turn started.
    expect(events.some((e) => e.payload.kind === "user_message" && e.payload.messageId === c.id)).toBe(false);
    expect(await listInbox(rt.db, id)).toEqual([]);
    expect(events.filter((e) => e.payload.kind === "turn_start")).toHaveLength(1);
  });

  it("refuses steer now on an idle agent (STEER_UNAVAILABLE) and keeps the prompt queued", async () => {
    const id = await newTestSession(rt.db, "test", ana);
    // Another (simulated) process holds a live lease and drives this agent, which is idle:
    // this process cannot take the agent, so the prompt stays queued deterministically.
    await rt.db.session.update({
      where: { id },
      data: { leaseOwner: "proc-elsewhere", leaseExpiresAt: new Date(Date.now() + 10 * 60_000), status: "idle" },
    });
    const item = await caller.session.prompt({ sessionId: id, text: "Later, please" });
    const state = await caller.session.get({ sessionId: id });
    expect(state.session).toMatchObject({ status: "idle", running: false });
    expect(state.inbox).toEqual([item]);

    await expectAppError(
      caller.session.steerNow({ sessionId: id, itemId: item.id }),
      "CONFLICT",
      "STEER_UNAVAILABLE",
      "session.steerNow",
    );
    expect(await listInbox(rt.db, id)).toEqual([item]);
    expect(await eventsOf(rt.db, id)).toEqual([]);

    // Once that process is gone (lease released), this runtime adopts the agent and the
    // prompt runs as an ordinary queued turn.
    await rt.db.session.update({ where: { id }, data: { leaseOwner: null, leaseExpiresAt: null, status: "inactive" } });
    const events = await waitForTurns(rt.db, id, 1, 20_000);
    expect(humanTexts(events)).toEqual(["Later, please"]);
    expect(events.find((e) => e.payload.kind === "user_message")?.payload).toMatchObject({ messageId: item.id });
    expect(turnEnds(events).map((t) => t.reason)).toEqual(["completed"]);
  });

  it("stops a streaming turn, keeps the partial reply, and runs the queued prompt next", async () => {
    const id = await newTestSession(rt.db, "test", ana);
    const story = "Tell me a long story about a lighthouse";
    holdModel(); // the reply streams its first words, then waits
    await caller.session.prompt({ sessionId: id, text: story });
    const start = await waitForRunningTurn(id);
    const turnId = turnIdOf(start)!;
    const queued = await caller.session.prompt({ sessionId: id, text: "And now a short one" });
    await waitFor(
      async () => (await eventsOf(rt.db, id)).some((e) => e.payload.kind === "assistant_delta"),
      10_000,
      "streamed text",
    );

    expect(await caller.session.stop({ sessionId: id })).toEqual({ aborting: true });
    // The stop ends the turn while the model is still held, i.e. mid-reply.
    await waitFor(
      async () => turnEnds(await eventsOf(rt.db, id)).some((t) => t.turnId === turnId),
      10_000,
      "the stopped turn to end",
    );
    releaseModel();

    const events = await waitForTurns(rt.db, id, 2, 20_000);
    const [first, second] = turnsOf(events);
    expect(turnEnds(first!)).toEqual([{ kind: "turn_end", turnId, reason: "aborted" }]);
    const partial = first!.filter((e) => e.payload.kind === "assistant_message");
    expect(partial).toHaveLength(1);
    const p = partial[0]!.payload;
    if (p.kind !== "assistant_message") throw new Error("unreachable");
    expect(p.interrupted).toBe(true);
    expect(p.toolCalls).toEqual([]);
    // Partial: everything streamed so far is in it, and it is a proper prefix of the full reply.
    const full = defaultPlaybook({ system: "", messages: [{ role: "user", text: story }], tools: [], purpose: "step" }).text;
    const streamed = first!.flatMap((e) => (e.payload.kind === "assistant_delta" ? [e.payload.text] : [])).join("");
    expect(streamed.length).toBeGreaterThan(0);
    expect(p.text.startsWith(streamed)).toBe(true);
    expect(full.startsWith(p.text)).toBe(true);
    expect(p.text.length).toBeLessThan(full.length);

    // Stop keeps the queue: the queued prompt ran as the next turn, to completion.
    expect(humanTexts(second!)).toEqual(["And now a short one"]);
    expect(second!.find((e) => e.payload.kind === "user_message")?.payload).toMatchObject({ messageId: queued.id });
    expect(turnEnds(second!).map((t) => t.reason)).toEqual(["completed"]);
    const reply = second!.find((e) => e.payload.kind === "assistant_message")!.payload;
    expect(reply).toMatchObject({ interrupted: false });
    expect(await listInbox(rt.db, id)).toEqual([]);
  });

  it("treats stop on an idle session as a no-op that does not hit the next turn", async () => {
    const id = await newTestSession(rt.db, "test", ana);
    expect(await caller.session.stop({ sessionId: id })).toEqual({ aborting: false });
    await caller.session.prompt({ sessionId: id, text: "/tool current_time {}" });
    const events = await waitForTurns(rt.db, id, 1, 20_000);
    expect(await caller.session.stop({ sessionId: id })).toEqual({ aborting: false });
    expect(turnEnds(events).map((t) => t.reason)).toEqual(["completed"]);
    expect(await eventsOf(rt.db, id)).toEqual(events);
  });

  it("forks completed turns into a new independent session", async () => {
    const source = await newTestSession(rt.db, "source", ana);
    // Paced, so the source log holds streamed deltas that the fork must leave out.
    paceMs = 30;
    await caller.session.prompt({ sessionId: source, text: "/tool current_time {}" });
    await waitForTurns(rt.db, source, 1, 20_000);
    await caller.session.prompt({ sessionId: source, text: '/tool current_time {"timeZone": "Asia/Tokyo"}' });
    const sourceEvents = await waitForTurns(rt.db, source, 2, 20_000);
    expect(kinds(sourceEvents)).toContain("assistant_delta");
    paceMs = 0;
    const firstTurnEnd = sourceEvents.find((e) => e.payload.kind === "turn_end")!.seq;

    // All completed turns.
    const fork = await caller.session.fork({ sessionId: source });
    expect(fork.id).not.toBe(source);
    expect(fork).toMatchObject({ title: "source (fork)", forkedFromId: source, running: false });
    const forkEvents = await eventsOf(rt.db, asSessionId(fork.id));
    const expected = sourceEvents.filter((e) => e.payload.kind !== "assistant_delta");
    expect(forkEvents.map((e) => e.payload)).toEqual(expected.map((e) => e.payload));
    expectConsecutive(forkEvents, 1, expected.length);
    expect(fork.lastSeq).toBe(expected.length);
    expect(kinds(forkEvents)).not.toContain("assistant_delta");
    expect(turnEnds(forkEvents)).toHaveLength(2);
    const got = await caller.session.get({ sessionId: fork.id });
    expect(got.session).toMatchObject({ id: fork.id, forkedFromId: source });

    // throughSeq inside the first turn (its step_start) or at its end: the first turn only.
    const firstOnly = sourceEvents.filter((e) => e.seq <= firstTurnEnd && e.payload.kind !== "assistant_delta");
    for (const throughSeq of [2, firstTurnEnd]) {
      const partial = await caller.session.fork({ sessionId: source, throughSeq, title: "first turn" });
      expect(partial).toMatchObject({ title: "first turn", forkedFromId: source, lastSeq: firstOnly.length });
      const partialEvents = await eventsOf(rt.db, asSessionId(partial.id));
      expect(partialEvents.map((e) => e.payload)).toEqual(firstOnly.map((e) => e.payload));
      expectConsecutive(partialEvents, 1, firstOnly.length);
    }

    // Out of range fork points.
    for (const throughSeq of [sourceEvents.length + 1, 10_000]) {
      await expectAppError(
        caller.session.fork({ sessionId: source, throughSeq }),
        "BAD_REQUEST",
        "FORK_POINT_INVALID",
        "session.fork",
      );
    }

    // A prompt to the fork runs there and leaves the source alone.
    const forkId = asSessionId(fork.id);
    const item = await caller.session.prompt({ sessionId: forkId, text: "/tool current_time {}" });
    const after = await waitForTurns(rt.db, forkId, 3, 20_000);
    expect(after.slice(0, expected.length)).toEqual(forkEvents);
    expect(after.some((e) => e.payload.kind === "user_message" && e.payload.messageId === item.id)).toBe(true);
    expectConsecutive(after, 1, after.length);
    expect(await eventsOf(rt.db, source)).toEqual(sourceEvents);
    expect((await caller.session.get({ sessionId: source })).session.lastSeq).toBe(sourceEvents.length);
  });
});

describe("the live feed", () => {
  it("replays from the start, resumes after a given id without gap or duplicate, and streams new events", async () => {
    const id = await newTestSession(rt.db, "test", ana);
    await caller.session.prompt({ sessionId: id, text: "/tool current_time {}" });
    const before = await waitForTurns(rt.db, id, 1);
    const n = before.length;

    // From the beginning: every event in order, each tracked by its seq, then the state.
    const live = await subscribe(id, null);
    await waitFor(() => live.events().length >= n && live.states().length >= 1, 10_000, "replay and state");
    expect(live.events()).toEqual(before);
    for (const m of live.received) if (m.data.type === "events") expect(m.id).toBe(String(m.data.events.at(-1)!.seq));
    // The state follows the replayed events.
    const firstState = live.received.findIndex((m) => m.data.type === "state");
    expect(live.received.slice(0, firstState).flatMap((m) => (m.data.type === "events" ? m.data.events : []))).toHaveLength(n);
    expect(live.received[firstState]!.id).toBe(String(n));
    expect(live.states()[0]).toMatchObject({ session: { id, lastSeq: n, running: false }, inbox: [] });

    // New input while subscribed shows up live, still gap-free.
    await caller.session.prompt({ sessionId: id, text: "Once more, please" });
    const after = await waitForTurns(rt.db, id, 2);
    const m = after.length;
    await waitFor(() => live.events().length >= m, 10_000, "live events of the second turn");
    // The state after the second turn settles too (the last state message shows it idle).
    await waitFor(
      () => live.states().some((s) => s.session.lastSeq === m && !s.session.running),
      10_000,
      "final state",
    );
    expectConsecutive(live.events(), 1, m);
    expect(live.events()).toEqual(after);
    await live.close();

    // Resume after k: exactly the events after k.
    for (const k of [1, 3, m - 1, m]) {
      const resumed = await subscribe(id, String(k));
      await waitFor(() => resumed.states().length >= 1, 10_000, `state after resuming from ${k}`);
      expect(resumed.events()).toEqual(after.slice(k));
      expectConsecutive(resumed.events(), k + 1, m);
      for (const msg of resumed.received) if (msg.data.type === "events") expect(msg.id).toBe(String(msg.data.events.at(-1)!.seq));
      await resumed.close();
      expect(resumed.events()).toEqual(after.slice(k));
    }
  });

  it("ends cleanly when the client goes away", async () => {
    const id = await newTestSession(rt.db, "test", ana);
    const live = await subscribe(id, null);
    await waitFor(() => live.states().length >= 1, 10_000, "initial state");
    expect(live.events()).toEqual([]);
    const t0 = Date.now();
    await live.close();
    // The server-side wait (5 s) is cut short by the abort signal.
    expect(Date.now() - t0).toBeLessThan(2_000);
  });
});
