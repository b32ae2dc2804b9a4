import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { abortableWait, abortError } from "../abortable";
import { inTx } from "../db/client";
import { asSessionId, asTurnId, newMessageId, newTurnId, type SessionId } from "../ids";
import type { LanguageModel, ModelChunk, ModelRequest } from "../models/types";
import { teamPlaybook } from "../team/playbook";
import { membershipOf } from "../members/membership";
import { spawnTeammate } from "../team/provisioning";
import { createTeamLayer } from "../team-layer";
import { childProcessDatabase, spawnRuntime } from "../testing/runtime-child";
import { eventsOf, newTestSession, startTestRuntime, turnEnds, waitFor, waitForTurns, type TestRuntime } from "../testing/runtime-harness";
import { isRuntimeContext } from "../models/runtime-context";
import type { SessionEvent } from "./events";
import { listInbox } from "../testing/inbox";
import { appendEvents } from "./session-log";
import { promptSession, requestAbort } from "./sessions";
import { runTool } from "./tools";

// Input that arrives while an interrupt or Stop is being carried out is waking input
// (SPEC.md §2): it is never parked with the input that was there before. And a request is
// durable: a driver that missed its notification honours it at the next step boundary.

const t = childProcessDatabase();

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** The newest prompt the model sees (runtime-context snapshots follow the claimed input). */
const lastPrompt = (req: ModelRequest) =>
  req.messages.flatMap((m) => (m.role === "user" && !isRuntimeContext(m.text) ? [m.text] : [])).at(-1) ?? "";

/**
 * Replies "done: <input>"; for the input "hold", streams once and then holds the turn open
 * until aborted, and after the abort until `release` — the window in which the cut turn is
 * still closing.
 */
class GateModel implements LanguageModel {
  readonly id = "test:gate";
  holding = deferred();
  aborted = deferred();
  release = deferred();
  /** "two steps": step 0 holds here, then calls current_time; step 1 answers. */
  stepHeld = deferred();
  stepRelease = deferred();
  async *stream(req: ModelRequest, signal: AbortSignal): AsyncIterable<ModelChunk> {
    yield { type: "text-delta", text: "working " };
    if (lastPrompt(req) === "two steps" && !req.messages.some((m) => m.role === "tool")) {
      this.stepHeld.resolve();
      await this.stepRelease.promise;
      yield { type: "tool-call", call: { toolCallId: "t1", toolName: "current_time", input: {} } };
      yield { type: "finish", usage: { inputTokens: 1, outputTokens: 1 } };
      return;
    }
    if (lastPrompt(req) === "hold") {
      this.holding.resolve();
      await abortableWait({ signal });
      this.aborted.resolve();
      await this.release.promise;
      throw abortError("aborted");
    }
    yield { type: "text-delta", text: `done: ${lastPrompt(req)}` };
    yield { type: "finish", usage: { inputTokens: 1, outputTokens: 1 } };
  }
}

const promptsOfTurns = (events: SessionEvent[]) => {
  const turns: string[][] = [];
  for (const { payload: p } of events) {
    if (p.kind === "turn_start") turns.push([]);
    if (p.kind === "user_message" && p.source.kind === "human") turns.at(-1)!.push(p.text);
  }
  return turns;
};

describe.each(["interrupt", "stop"] as const)("input that arrives while a %s is carried out", (kind) => {
  let rt: TestRuntime;
  const model = new GateModel();
  beforeAll(async () => {
    rt = await startTestRuntime(t, { resolveModel: () => model });
  });
  afterAll(async () => {
    await rt?.stop();
  });

  it("runs: the end of the cut turn does not park it", async () => {
    const id = await newTestSession(rt.db);
    await promptSession(rt.db, id, { text: "hold" });
    await promptSession(rt.db, id, { text: "queued before" });
    await model.holding.promise;
    expect(await requestAbort(rt.db, id, kind)).toEqual({ aborting: true });
    await model.aborted.promise;
    // The driver knows of the abort, and the turn is not closed yet: a prompt arrives now.
    await promptSession(rt.db, id, { text: "after the request" });
    model.release.resolve();

    // Waking input un-parks: the next turn takes the oldest queued prompt, then the rest follow.
    const all = await waitForTurns(rt.db, id, 3);
    expect(turnEnds(all).map((t) => t.reason)).toEqual(["aborted", "completed", "completed"]);
    expect(promptsOfTurns(all)).toEqual([["hold"], ["queued before"], ["after the request"]]);
    expect(await listInbox(rt.db, id)).toEqual([]);
  });

  if (kind === "stop") {
    it("a prompt queued during a turn is never claimed at a later step boundary: it is its own turn", async () => {
      const id = await newTestSession(rt.db);
      await promptSession(rt.db, id, { text: "two steps" });
      await model.stepHeld.promise;
      await promptSession(rt.db, id, { text: "queued meanwhile" });
      model.stepRelease.resolve();
      const events = await waitForTurns(rt.db, id, 2);
      expect(promptsOfTurns(events)).toEqual([["two steps"], ["queued meanwhile"]]);
      // The first turn had a later step (after the tool), and it claimed nothing.
      const firstEnd = events.findIndex((e) => e.payload.kind === "turn_end");
      expect(events.slice(0, firstEnd).some((e) => e.payload.kind === "step_start" && e.payload.step === 1)).toBe(true);
    });
  }
});

describe("a stop or interrupt request whose notification was missed", () => {
  it.each(["interrupt", "stop"] as const)(
    "%s: a driver in another process honours it at the next step boundary",
    { timeout: 120_000 },
    async (kind) => {
      const id: SessionId = await newTestSession(t.db);
      await spawnRuntime(t, { SCRIPTED_MODEL_DELAY_MS: "150", AGENT_LEASE_TTL_MS: "2000" });
      // Step 0 streams a short reply and calls the tool; step 1 would describe its result.
      await promptSession(t.db, id, { text: "/tool current_time {}" });
      await waitFor(async () => (await eventsOf(t.db, id)).some((e) => e.payload.kind === "assistant_delta"), 60_000, "step 0");
      // The request as requestAbort stores it, but without its notification.
      await t.db.$executeRaw`UPDATE sessions SET abort_request = ${kind}, parked = parked OR ${kind === "interrupt"} WHERE id = ${id}`;
      await promptSession(t.db, id, { text: "after the request" });

      const events = await waitForTurns(t.db, id, 2, 60_000);
      const ends = turnEnds(events);
      expect(ends.map((t) => t.reason)).toEqual(["aborted", "completed"]);
      // The first turn ran its tool and stopped at the boundary: no step 1.
      const first = events.slice(0, events.findIndex((e) => e.payload.kind === "turn_end") + 1);
      expect(first.filter((e) => e.payload.kind === "tool_result")).toHaveLength(1);
      expect(first.some((e) => e.payload.kind === "step_start" && e.payload.step === 1)).toBe(false);
      expect(promptsOfTurns(events)).toEqual([["/tool current_time {}"], ["after the request"]]);
    },
  );
});

describe("interrupt_agent on a running teammate", () => {
  let rt: TestRuntime;
  beforeAll(async () => {
    rt = await startTestRuntime(t, { team: true, playbook: teamPlaybook, delayMs: 100 });
  });
  afterAll(async () => {
    await rt?.stop();
  });

  it("cuts its turn: previousStatus running, the turn ends aborted, nothing more is sent", async () => {
    const lead = await newTestSession(rt.db, "interrupting lead");
    const mate = await spawnTeammate(rt.db, await membershipOf(rt.db, lead), {
      name: "talker",
      description: "Talks",
      prompt: "Explain the plan at length before reporting back",
      context: "fresh",
    });
    const mateId = asSessionId(mate.sessionId);
    await waitFor(async () => (await eventsOf(rt.db, mateId)).some((e) => e.payload.kind === "assistant_delta"), 10_000, "the teammate streaming");
    const tools = new Map(createTeamLayer(rt.db, rt.hub).toolsFor(lead).tools.map((t) => [t.name, t]));
    const scope = { db: rt.db, sessionId: lead, turnId: asTurnId("turn_test"), callKey: "msg_x/interrupt", signal: new AbortController().signal };
    const out = await runTool(tools, "interrupt_agent", { target: "talker" }, scope);
    expect(out.output).toEqual({ previousStatus: "running" });

    const events = await waitForTurns(rt.db, mateId, 1);
    expect(turnEnds(events).map((t) => t.reason)).toEqual(["aborted"]);
    expect(events.find((e) => e.payload.kind === "assistant_message")?.payload).toMatchObject({ interrupted: true, toolCalls: [] });
    expect(await rt.db.teamMessage.count({ where: { senderSessionId: mateId } })).toBe(0);
    expect((await rt.db.session.findUniqueOrThrow({ where: { id: mateId } })).parked).toBe(true);
  });
});

describe("a stop or interrupt asked of a turn that a crash left open", () => {
  it.each(["interrupt", "stop"] as const)("%s still holds: the recovered turn ends aborted and does not resume", async (kind) => {
    const id = await newTestSession(t.db);
    const turnId = newTurnId();
    await inTx(t.db, (tx) =>
      appendEvents(
        tx,
        id,
        [
          { kind: "turn_start", turnId },
          { kind: "step_start", turnId, step: 0 },
          { kind: "user_message", messageId: newMessageId(), text: "cut me", source: { kind: "human" } },
        ],
        null,
      ),
    );
    // As requestAbort left it before the driving process died.
    await t.db.session.update({ where: { id }, data: { activeTurnId: turnId, abortRequest: kind, parked: kind === "interrupt" } });
    const rt = await startTestRuntime(t, {});
    try {
      const events = await waitForTurns(rt.db, id, 1);
      expect(turnEnds(events).map((e) => e.reason)).toEqual(["aborted"]);
      expect(await listInbox(rt.db, id)).toEqual([]);
      const row = await rt.db.session.findUniqueOrThrow({ where: { id } });
      expect(row).toMatchObject({ parked: kind === "interrupt", abortRequest: null, activeTurnId: null });
    } finally {
      await rt.stop();
    }
  });
});
