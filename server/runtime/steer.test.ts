import { describe, expect } from "vitest";
import { inTx } from "../db/client";
import type { SessionId } from "../ids";
import { runtimeTest } from "../testing/fixtures";
import { eventsOf, newTestSession, turnEnds, waitFor, waitForTurns } from "../testing/runtime-harness";
import type { SessionEvent } from "./events";
import { enqueue } from "./inbox";
import { listInbox } from "../testing/inbox";
import { getSession, promptSession, requestAbort } from "./sessions";

// The Steer adapter and interrupts, against real Postgres with a paced scripted model.

const it = runtimeTest({ delayMs: 15 })
  .extend("steer", { scope: "file" }, ({ rt }) => (id: SessionId, text: string) =>
    inTx(rt.db, (tx) => enqueue(tx, id, { mode: "steer", text, source: { kind: "system" } })),
  )
  .extend("hasDelta", { scope: "file" }, ({ rt }) => async (id: SessionId) =>
    (await eventsOf(rt.db, id)).some((e) => e.payload.kind === "assistant_delta"),
  );

function turnOf(events: SessionEvent[], messageText: string): string | undefined {
  let turn: string | undefined;
  for (const { payload: p } of events) {
    if (p.kind === "turn_start") turn = p.turnId;
    if (p.kind === "user_message" && p.text === messageText) return turn;
  }
  return undefined;
}

describe("Steer", () => {
  it("is taken at the next step boundary of a running turn: the same turn goes on", async ({ rt, steer, hasDelta }) => {
    const id = await newTestSession(rt.db);
    await promptSession(rt.db, id, { text: "What time is it?" });
    await waitFor(() => hasDelta(id), 10_000, "step 0 streaming");
    await steer(id, "Also: keep it short.");
    const events = await waitForTurns(rt.db, id, 1);

    expect(turnEnds(events)).toHaveLength(1);
    expect(turnOf(events, "Also: keep it short.")).toBe(turnOf(events, "What time is it?"));
    // Claimed at a later step, after the first model call.
    const steerAt = events.findIndex((e) => e.payload.kind === "user_message" && e.payload.text === "Also: keep it short.");
    const firstReply = events.findIndex((e) => e.payload.kind === "assistant_message");
    expect(steerAt).toBeGreaterThan(firstReply);
    expect(events[steerAt - 1]?.payload).toMatchObject({ kind: "step_start", step: 1 });
    const last = events.filter((e) => e.payload.kind === "assistant_message").at(-1)!.payload;
    expect(last.kind === "assistant_message" && last.text).toContain("keep it short");
  });

  it("extends a turn whose model asked for no tools when steer input is pending", async ({ rt, steer, hasDelta }) => {
    const id = await newTestSession(rt.db);
    await promptSession(rt.db, id, { text: "Write a plan" });
    await waitFor(() => hasDelta(id), 10_000, "streaming");
    await steer(id, "One more thing");
    const events = await waitForTurns(rt.db, id, 1);
    expect(turnEnds(events)).toHaveLength(1);
    expect(turnOf(events, "One more thing")).toBe(turnOf(events, "Write a plan"));
    expect(events.filter((e) => e.payload.kind === "step_start")).toHaveLength(2);
  });

  it("starts a turn at once when the agent is idle", async ({ rt, steer }) => {
    const id = await newTestSession(rt.db);
    await promptSession(rt.db, id, { text: "hello" });
    await waitForTurns(rt.db, id, 1);
    await steer(id, "ping while idle");
    const events = await waitForTurns(rt.db, id, 2);
    expect(turnOf(events, "ping while idle")).not.toBe(turnOf(events, "hello"));
    expect(turnEnds(events).map((t) => t.reason)).toEqual(["completed", "completed"]);
  });
});

describe("interrupt", () => {
  it("cancels the turn, keeps the inbox parked until the next waking input", async ({ rt, steer, hasDelta }) => {
    const id = await newTestSession(rt.db);
    await promptSession(rt.db, id, { text: "long task" });
    await promptSession(rt.db, id, { text: "queued behind" });
    await waitFor(() => hasDelta(id), 10_000, "streaming");
    expect(await requestAbort(rt.db, id, "interrupt")).toEqual({ aborting: true });
    await waitFor(async () => turnEnds(await eventsOf(rt.db, id)).length === 1, 10_000, "aborted turn");

    const events = await eventsOf(rt.db, id);
    expect(turnEnds(events)[0]?.reason).toBe("aborted");
    const cut = events.find((e) => e.payload.kind === "assistant_message")!.payload;
    expect(cut).toMatchObject({ interrupted: true, toolCalls: [] });
    // Parked: the driver looked at the inbox and went idle with the queued prompt waiting.
    await waitFor(async () => (await getSession(rt.db, id)).status === "idle", 10_000, "the driver idle");
    expect((await listInbox(rt.db, id)).map((i) => i.text)).toEqual(["queued behind"]);
    expect(turnEnds(await eventsOf(rt.db, id))).toHaveLength(1);

    // The next waking input un-parks. A turn's first step claims every steer item plus one
    // queued prompt, so both enter the next turn.
    await steer(id, "wake up");
    const after = await waitForTurns(rt.db, id, 2);
    expect(turnOf(after, "queued behind")).toBeDefined();
    expect(turnOf(after, "wake up")).toBe(turnOf(after, "queued behind"));
    expect(turnEnds(after).map((t) => t.reason)).toEqual(["aborted", "completed"]);
    expect(await listInbox(rt.db, id)).toEqual([]);
  });
});
