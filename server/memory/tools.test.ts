import { describe, expect } from "vitest";
import { inTx, type Db } from "../db/client";
import { asSessionId, asTurnId, newMessageId, type SessionId } from "../ids";
import { createSession } from "../runtime/sessions";
import { runTool, type ToolOutcome } from "../runtime/tools";
import { appendNotified } from "../testing/append";
import { runtimeTest } from "../testing/fixtures";
import { decideMemory, getMemory, listMemories } from "./store";
import { createMemoryTools } from "./tools";

// The Memory tools called the way the runtime calls them (runTool): a proposal is made once per
// call and names its source step; bad input is a tool error that persists nothing; search finds
// what people approved.

const it = runtimeTest({ team: true });
const tools = new Map(createMemoryTools().map((t) => [t.name, t]));
const olive = { id: "usr_olive", name: "Olive" };

function call(db: Db, sessionId: SessionId, name: string, input: unknown, callKey = `${newMessageId()}/call_1`): Promise<ToolOutcome> {
  return runTool(tools, name, input, { db, sessionId, turnId: asTurnId("turn_test"), callKey, signal: new AbortController().signal });
}

async function newLead(db: Db, title: string): Promise<SessionId> {
  return asSessionId((await createSession(db, { title, model: { provider: "scripted", model: "keyless" } })).id);
}

describe("Memory tools", () => {
  it("memory_propose: once per call, waiting for a person, its source the step that made the call", async ({ rt }) => {
    await rt.runtime.stop();
    const lead = await newLead(rt.db, "Proposing");
    const messageId = newMessageId();
    await appendNotified(rt.db, lead, [
      { kind: "turn_start", turnId: "turn_test" },
      {
        kind: "assistant_message",
        messageId,
        turnId: "turn_test",
        step: 1,
        model: "keyless",
        text: "I will remember that.",
        toolCalls: [{ toolCallId: "call_1", toolName: "memory_propose", input: {} }],
        usage: { inputTokens: 1, outputTokens: 1 },
        interrupted: false,
      },
    ]);
    const key = `${messageId}/call_1`;
    const first = await call(rt.db, lead, "memory_propose", { text: "The staging database is reset every night.", tags: ["Staging", "staging"] }, key);
    expect(first).toMatchObject({ isError: false, output: { status: "proposed" } });
    const again = await call(rt.db, lead, "memory_propose", { text: "The staging database is reset every night." }, key);
    expect(again.output).toEqual(first.output);
    const [m] = await listMemories(rt.db, lead, "proposed");
    expect(m).toMatchObject({ text: "The staging database is reset every night.", tags: ["staging"], proposedBy: { kind: "member", name: "lead", sessionId: lead } });
    const seq = (await rt.db.sessionEvent.findFirstOrThrow({ where: { sessionId: lead, messageId } })).seq;
    expect(m!.proposedBy).toMatchObject({ seq });
    expect(await listMemories(rt.db, lead, "proposed")).toHaveLength(1);
  });

  it("bad input and a replacement of no memory are tool errors, and nothing is stored", async ({ rt }) => {
    const lead = await newLead(rt.db, "Refused");
    for (const input of [{ text: "" }, { text: "x".repeat(3000) }, { text: "ok", tags: Array.from({ length: 9 }, (_, i) => `t${i}`) }, { text: "ok", extra: 1 }]) {
      expect(await call(rt.db, lead, "memory_propose", input)).toMatchObject({ isError: true, errorCode: "TOOL_INVALID_INPUT" });
    }
    expect(await call(rt.db, lead, "memory_propose", { text: "Corrected", replaces: "mem_nope" })).toMatchObject({ isError: true, errorCode: "MEMORY_NOT_FOUND" });
    expect(await listMemories(rt.db, lead, "proposed")).toEqual([]);
  });

  it("memory_search finds approved memories only, best first, with their ids", async ({ rt }) => {
    const lead = await newLead(rt.db, "Searching");
    const proposed = await call(rt.db, lead, "memory_propose", { text: "Releases are cut from the main branch on Thursdays." });
    await call(rt.db, lead, "memory_propose", { text: "Releases need a changelog entry." });
    const id = (proposed.output as { id: string }).id;
    expect(await call(rt.db, lead, "memory_search", { query: "releases" })).toEqual({ isError: false, output: { memories: [] }, recorded: null });
    await inTx(rt.db, (tx) => decideMemory(tx, lead, id, olive, { approve: true }));
    const found = await call(rt.db, lead, "memory_search", { query: "release thursday" });
    expect(found.output).toEqual({ memories: [{ id, text: "Releases are cut from the main branch on Thursdays.", tags: [] }] });
    expect((await getMemory(rt.db, lead, id)).status).toBe("approved");
    expect(await call(rt.db, lead, "memory_search", { query: "" })).toMatchObject({ isError: true, errorCode: "TOOL_INVALID_INPUT" });
  });
});
