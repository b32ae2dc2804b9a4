import { describe, expect } from "vitest";
import { inTx, type Db } from "../db/client";
import { asSessionId, newMessageId, newTurnId, type SessionId } from "../ids";
import type { LanguageModel, ModelChunk, ModelRequest } from "../models/types";
import { membershipOf } from "../members/membership";
import { spawnTeammate } from "../team/provisioning";
import { runtimeTest } from "../testing/fixtures";
import { eventsOf, newTestSession, waitFor, waitForTurns } from "../testing/runtime-harness";
import type { EventPayload } from "./events";
import { appendEvents } from "./session-log";
import { forkSession, promptSession } from "./sessions";

// Sessions longer than any page size: cold resume, a fork and a fork teammate see the whole
// history, its last turns included (nothing truncates a history silently).

const TURNS = 1_800; // 6 events a turn: 10,800 events
const FIRST = "fact number 0";
const LAST = `fact number ${TURNS - 1}`;

const requests: ModelRequest[] = [];

/** Records what it is sent and answers briefly. */
const recorder: LanguageModel = {
  id: "test:recorder",
  async *stream(req): AsyncIterable<ModelChunk> {
    requests.push(req);
    yield { type: "text-delta", text: "noted" };
    yield { type: "finish", usage: { inputTokens: 1, outputTokens: 1 } };
  },
};

const it = runtimeTest({ resolveModel: () => recorder, team: true, config: { compactionBudgetTokens: 10_000_000 } });

/** Appends TURNS completed turns straight into the log (as a long past would have left them). */
async function longSession(db: Db): Promise<SessionId> {
  const id = await newTestSession(db, "long");
  const turns: EventPayload[] = [];
  for (let i = 0; i < TURNS; i++) {
    const turnId = newTurnId();
    turns.push(
      { kind: "turn_start", turnId },
      { kind: "step_start", turnId, step: 0 },
      { kind: "user_message", messageId: newMessageId(), text: `fact number ${i}`, source: { kind: "human" } },
      {
        kind: "assistant_message",
        messageId: newMessageId(),
        turnId,
        step: 0,
        model: "test",
        text: `ok ${i}`,
        toolCalls: [],
        usage: { inputTokens: 1, outputTokens: 1 },
        interrupted: false,
      },
      { kind: "step_end", turnId, step: 0 },
      { kind: "turn_end", turnId, reason: "completed" },
    );
  }
  for (let i = 0; i < turns.length; i += 1_000) {
    await inTx(db, (tx) => appendEvents(tx, id, turns.slice(i, i + 1_000), null));
  }
  return id;
}

const texts = (events: { payload: EventPayload }[]) =>
  events.flatMap((e) => (e.payload.kind === "user_message" ? [e.payload.text] : []));

describe("a session of more than 10,000 events", () => {
  it("is read whole by cold resume, a fork and a fork teammate", { timeout: 120_000 }, async ({ rt }) => {
    const id = await longSession(rt.db);
    expect((await eventsOf(rt.db, id)).length).toBe(TURNS * 6);

    const fork = await forkSession(rt.db, id, {});
    const forked = texts(await eventsOf(rt.db, asSessionId(fork.id)));
    expect(forked[0]).toBe(FIRST);
    expect(forked.at(-1)).toBe(LAST);
    expect(forked).toHaveLength(TURNS);

    const mate = await spawnTeammate(rt.db, await membershipOf(rt.db, id), {
      name: "heir",
      description: "Carries on",
      prompt: "carry on",
      context: "fork",
    });
    const seeded = texts(await eventsOf(rt.db, asSessionId(mate.sessionId)));
    expect(seeded.slice(0, 1)).toEqual([FIRST]);
    expect(seeded).toContain(LAST);
    expect(seeded.filter((t) => t.startsWith("fact number"))).toHaveLength(TURNS);

    // Cold resume: the session has no driver; a prompt starts one from the log alone.
    requests.length = 0;
    await promptSession(rt.db, id, { text: "what was the last fact?" });
    await waitForTurns(rt.db, id, TURNS + 1, 60_000);
    const req = await waitFor(() => requests.find((r) => r.messages.some((m) => m.role === "user" && m.text === "what was the last fact?")));
    const sent = req.messages.flatMap((m) => (m.role === "user" ? [m.text] : []));
    expect(sent[0]).toBe(FIRST);
    expect(sent).toContain(LAST);
    expect(sent.filter((t) => t.startsWith("fact number"))).toHaveLength(TURNS);
  });
});
