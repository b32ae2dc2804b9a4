import { describe, expect } from "vitest";
import { z } from "zod";
import { asTurnId } from "../ids";
import { databaseTest } from "../testing/fixtures";
import { newTestSession } from "../testing/runtime-harness";
import { defineTool, type ToolDefinition } from "./tools";
import { callTool, type CallScope } from "./waiting-calls";

// The moment a call would wait for people, against a real database: a stop stored for the turn
// before the park parks nothing (the session row lock orders the two: sessions.ts requestAbort
// takes it to store the stop, the park takes it before it looks). The whole life of an
// approval is in team/approvals.test.ts; its crash windows in team/approvals-crash.test.ts.

const it = databaseTest();

const guarded: ToolDefinition = defineTool({
  name: "guarded",
  description: "a tool under ask",
  input: z.object({ n: z.number() }),
  output: z.object({ n: z.number() }),
  execute: (input) => Promise.resolve(input),
});

describe("callTool", () => {
  it("parks nothing when a stop is stored for the turn, and says so", async ({ db }) => {
    const id = await newTestSession(db, "stopped before the park");
    const lease = { owner: "test-owner", token: 7 };
    const turnId = asTurnId("turn_stopped");
    await db.$executeRaw`UPDATE sessions SET lease_owner = ${lease.owner}, lease_token = ${lease.token},
        lease_expires_at = now() + interval '1 minute', active_turn_id = ${turnId}, abort_request = 'stop' WHERE id = ${id}`;
    const ran: string[] = [];
    const scope: CallScope = {
      db,
      sessionId: id,
      events: [],
      lease,
      tools: new Map([[guarded.name, guarded]]),
      recoveryTool: () => undefined,
      append: () => Promise.reject(new Error("nothing is appended")),
      committed: () => undefined,
      log: () => undefined,
      modes: new Map([[guarded.name, "ask" as const]]),
      toolOptions: undefined,
      tasksInProgress: () => Promise.resolve([]),
      run: (call) => {
        ran.push(call.toolName);
        return Promise.resolve();
      },
    };
    const call = { toolCallId: "call_1", toolName: "guarded", input: { n: 1 } };
    expect(await callTool(scope, turnId, "msg_1", call)).toBe("stopped");
    expect(ran).toEqual([]);
    expect(await db.approval.count({ where: { sessionId: id } })).toBe(0);
    expect((await db.session.findUniqueOrThrow({ where: { id }, select: { waitingFor: true } })).waitingFor).toBeNull();

    // Without the stop, the same call parks: the request is recorded and the session waits.
    await db.$executeRaw`UPDATE sessions SET abort_request = NULL WHERE id = ${id}`;
    expect(await callTool(scope, turnId, "msg_1", call)).toBe("parked");
    expect(await db.approval.count({ where: { sessionId: id, status: "pending" } })).toBe(1);
    expect((await db.session.findUniqueOrThrow({ where: { id }, select: { waitingFor: true } })).waitingFor).toBe("approval");
  });
});
