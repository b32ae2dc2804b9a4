import { describe, expect } from "vitest";
import { z } from "zod";
import { inTx } from "../db/client";
import { newMessageId } from "../ids";
import { runtimeTest } from "../testing/fixtures";
import { eventsOf, kinds, newTestSession, turnEnds, waitFor, waitForTurns } from "../testing/runtime-harness";
import { enqueue } from "./inbox";
import { listInbox } from "../testing/inbox";
import { promptSession } from "./sessions";

// Turns and steps against real Postgres: Queue turns, tool calls, bad tool arguments,
// gap-free logs, unique message ids.

const it = runtimeTest();

describe("a prompt", () => {
  it("runs as one turn with a gap-free log", async ({ rt }) => {
    const id = await newTestSession(rt.db);
    const item = await promptSession(rt.db, id, { text: "Plan a picnic" });
    const events = await waitForTurns(rt.db, id, 1);

    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(kinds(events)).toEqual([
      "turn_start",
      "step_start",
      "user_message",
      "user_message", // runtime context snapshot
      "assistant_message",
      "step_end",
      "turn_end",
    ]);
    const [prompt, snapshot] = events.filter((e) => e.payload.kind === "user_message").map((e) => e.payload);
    expect(prompt).toMatchObject({ messageId: item.id, text: "Plan a picnic", source: { kind: "human" } });
    expect(snapshot).toMatchObject({ source: { kind: "runtime_context" } });
    const reply = events.find((e) => e.payload.kind === "assistant_message")!.payload;
    expect(reply).toMatchObject({ interrupted: false, toolCalls: [] });
    expect(reply.kind === "assistant_message" && reply.text).toContain("Plan a picnic");
    expect(turnEnds(events)).toEqual([expect.objectContaining({ reason: "completed" })]);
    expect(await listInbox(rt.db, id)).toEqual([]);
  });

  it("calls a tool, feeds the result back, and answers in the same turn", async ({ rt }) => {
    const id = await newTestSession(rt.db);
    await promptSession(rt.db, id, { text: "What time is it in Europe/Paris?" });
    const events = await waitForTurns(rt.db, id, 1);
    const steps = events.filter((e) => e.payload.kind === "step_start");
    expect(steps).toHaveLength(2);
    const result = events.find((e) => e.payload.kind === "tool_result")!.payload;
    expect(result).toMatchObject({ toolName: "current_time", isError: false, output: { timeZone: "Europe/Paris" } });
    const last = events.filter((e) => e.payload.kind === "assistant_message").at(-1)!.payload;
    expect(last.kind === "assistant_message" && last.text).toMatch(/^It is .*Europe\/Paris/);
    expect(new Set(events.flatMap((e) => ("turnId" in e.payload ? [e.payload.turnId] : []))).size).toBe(1);
  });

  it("commits a step in few transactions: start, claim and context together; a reply's end with it; a step's end with the next start; the last reply with the turn's end", async ({ rt }) => {
    const id = await newTestSession(rt.db);
    await promptSession(rt.db, id, { text: "What time is it in Europe/Paris?" });
    await waitForTurns(rt.db, id, 1);
    // Rows written by one transaction share its xmin: group the log by it.
    const rows = z.array(z.object({ tx: z.string(), kind: z.string() })).parse(
      await rt.db.$queryRaw`SELECT xmin::text AS tx, kind FROM session_events WHERE session_id = ${id} ORDER BY seq`,
    );
    const commits: string[][] = [];
    let last: string | null = null;
    for (const { tx, kind } of rows) {
      if (tx !== last) commits.push([]);
      commits.at(-1)!.push(kind);
      last = tx;
    }
    const deltaFree = commits.filter((c) => !c.every((k) => k === "assistant_delta"));
    expect(deltaFree).toEqual([
      ["turn_start", "step_start", "user_message", "user_message"],
      ["assistant_message"],
      ["tool_result"],
      ["step_end", "step_start"],
      ["assistant_message", "step_end", "turn_end"],
    ]);
  });

  it("keeps the last reply when the batch that commits it with the turn's end fails, then ends the turn with the error", async ({ rt }) => {
    // The first turn_end insert fails (a sequence, so the failure is not rolled back with it).
    await rt.db.$executeRawUnsafe(`CREATE SEQUENCE fail_turn_end_once`);
    await rt.db.$executeRawUnsafe(`CREATE FUNCTION fail_turn_end_once() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.kind = 'turn_end' AND nextval('fail_turn_end_once') = 1 THEN RAISE EXCEPTION 'injected failure'; END IF;
        RETURN NEW;
      END $$`);
    await rt.db.$executeRawUnsafe(`CREATE TRIGGER fail_turn_end_once BEFORE INSERT ON session_events FOR EACH ROW EXECUTE FUNCTION fail_turn_end_once()`);
    const id = await newTestSession(rt.db);
    await promptSession(rt.db, id, { text: "Plan a picnic" });
    const events = await waitForTurns(rt.db, id, 1);
    expect(kinds(events).filter((k) => k !== "assistant_delta")).toEqual([
      "turn_start",
      "step_start",
      "user_message",
      "user_message",
      "assistant_message",
      "step_end",
      "turn_end",
    ]);
    expect(turnEnds(events)).toEqual([expect.objectContaining({ reason: "error", error: expect.stringContaining("injected failure") })]);
    const session = await rt.db.session.findUniqueOrThrow({ where: { id }, select: { spentOutputTokens: true, activeTurnId: true } });
    expect(session.spentOutputTokens).toBeGreaterThan(0n);
    expect(session.activeTurnId).toBeNull();
  });

  it("turns invalid tool arguments into a tool error the model reads, and the turn goes on", async ({ rt }) => {
    const id = await newTestSession(rt.db);
    await promptSession(rt.db, id, { text: '/tool current_time {"timeZone": 42}' });
    const events = await waitForTurns(rt.db, id, 1);
    const result = events.find((e) => e.payload.kind === "tool_result")!.payload;
    expect(result).toMatchObject({ isError: true, errorCode: "TOOL_INVALID_INPUT" });
    const last = events.filter((e) => e.payload.kind === "assistant_message").at(-1)!.payload;
    expect(last.kind === "assistant_message" && last.text).toContain("TOOL_INVALID_INPUT");
    expect(turnEnds(events)).toEqual([expect.objectContaining({ reason: "completed" })]);
  });

  it("reports malformed JSON arguments and unknown tools as tool errors", async ({ rt }) => {
    const id = await newTestSession(rt.db);
    await promptSession(rt.db, id, { text: "/tool current_time {not json\n/tool no_such_tool {}" });
    const events = await waitForTurns(rt.db, id, 1);
    const codes = events.flatMap((e) => (e.payload.kind === "tool_result" ? [e.payload.errorCode] : []));
    expect(codes).toEqual(["TOOL_INVALID_INPUT", "TOOL_NOT_FOUND"]);
    expect(turnEnds(events)[0]?.reason).toBe("completed");
  });
});

describe("the Queue adapter", () => {
  it("runs queued prompts FIFO, each as its own turn", async ({ rt }) => {
    const id = await newTestSession(rt.db);
    const texts = ["first", "second", "third"];
    for (const text of texts) await promptSession(rt.db, id, { text });
    const events = await waitForTurns(rt.db, id, 3);
    const perTurn = new Map<string, string[]>();
    let turn = "";
    for (const { payload: p } of events) {
      if (p.kind === "turn_start") turn = p.turnId;
      if (p.kind === "user_message" && p.source.kind === "human") perTurn.set(turn, [...(perTurn.get(turn) ?? []), p.text]);
    }
    expect([...perTurn.values()]).toEqual([["first"], ["second"], ["third"]]);
  });

  it("never lets the same message id enter a session twice", async ({ rt }) => {
    const id = await newTestSession(rt.db);
    const messageId = newMessageId();
    await inTx(rt.db, (tx) => enqueue(tx, id, { id: messageId, mode: "steer", text: "once", source: { kind: "system" } }));
    await waitForTurns(rt.db, id, 1);
    // A redelivery of the same id (e.g. after a crash window) is dropped at claim time.
    await inTx(rt.db, (tx) => enqueue(tx, id, { id: messageId, mode: "steer", text: "once", source: { kind: "system" } }));
    await waitFor(async () => (await listInbox(rt.db, id)).length === 0, 5_000, "redelivery dropped");
    const events = await eventsOf(rt.db, id);
    expect(events.filter((e) => e.payload.kind === "user_message" && e.payload.messageId === messageId)).toHaveLength(1);
    await expect(
      rt.db.sessionEvent.create({
        data: { sessionId: id, seq: 10_000, kind: "user_message", messageId, payload: {} },
      }),
    ).rejects.toThrow();
  });
});
