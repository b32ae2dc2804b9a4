import { describe, expect } from "vitest";
import { runtimeTest } from "../testing/fixtures";
import { newTestSession, waitForTurns } from "../testing/runtime-harness";
import { promptSession } from "./sessions";

// The process-level host against a real database: what wakes the agents it drives.

const it = runtimeTest();

describe("the runtime", () => {
  it("wakes the agents it drives after a LISTEN reconnect: input that arrived without a hint is taken", async ({ rt }) => {
    const id = await newTestSession(rt.db);
    await promptSession(rt.db, id, { text: "First" });
    await waitForTurns(rt.db, id, 1);
    expect(rt.runtime.residentIds()).toContain(id);

    // Input whose notification was lost (sent while this process's LISTEN connection was down).
    await rt.db.inboxItem.create({ data: { sessionId: id, id: "lost-hint", mode: "queue", text: "Second", source: { kind: "human" } } });
    // The hub's poke after a reconnect.
    rt.hub.emit({ sessionId: "*", kind: "state" });

    const events = await waitForTurns(rt.db, id, 2);
    expect(events.some((e) => e.payload.kind === "user_message" && e.payload.messageId === "lost-hint")).toBe(true);
  });
});
