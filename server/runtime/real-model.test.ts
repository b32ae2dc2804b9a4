import { fakeProviderTest } from "../testing/fake-provider-fixture";
import { describe, expect } from "vitest";
import { parseEnv } from "../env";
import { asSessionId } from "../ids";
import { createModelResolver } from "../models/registry";
import { createTestDatabase } from "../testing/db";
import { startTestRuntime, turnEnds, waitForTurns } from "../testing/runtime-harness";
import { createSession, promptSession } from "./sessions";

// Whole turns through the real AI SDK code path: the runtime, the model registry and the SDK
// providers against a local server speaking each provider's wire format.

const it = fakeProviderTest({ OPENAI_MODEL: "fake-gpt", ANTHROPIC_MODEL: "fake-claude" });

describe.each([
  { provider: "openai-compatible" as const, model: "fake-gpt", path: "/v1/chat/completions" },
  { provider: "anthropic" as const, model: "fake-claude", path: "/v1/messages" },
])("a turn on $provider", ({ provider, model, path }) => {
  it("streams text, runs the requested tool, and sends the result back in the next step", async ({ rt, fake }) => {
    fake.reset();
    fake.enqueue(
      {
        text: ["Let me ", "check."],
        toolCalls: [{ id: "call_1", name: "current_time", argumentsJson: '{"timeZone":"UTC"}' }],
        usage: { inputTokens: 50, outputTokens: 7 },
      },
      { text: ["It is ", "now."], usage: { inputTokens: 80, outputTokens: 3 } },
    );
    const s = await createSession(rt.db, { title: provider, model: { provider, model } });
    const id = asSessionId(s.id);
    await promptSession(rt.db, id, { text: "What time is it?" });
    const events = await waitForTurns(rt.db, id, 1);

    expect(turnEnds(events)).toEqual([expect.objectContaining({ reason: "completed" })]);
    const replies = events.flatMap((e) => (e.payload.kind === "assistant_message" ? [e.payload] : []));
    expect(replies.map((r) => r.text)).toEqual(["Let me check.", "It is now."]);
    expect(replies[0]).toMatchObject({
      model: `${provider}:${model}`,
      toolCalls: [{ toolCallId: "call_1", toolName: "current_time", input: { timeZone: "UTC" } }],
      usage: { inputTokens: 50, outputTokens: 7 },
    });
    expect(events.find((e) => e.payload.kind === "tool_result")?.payload).toMatchObject({ isError: false, toolCallId: "call_1" });

    expect(fake.requests.map((r) => r.path)).toEqual([path, path]);
    // The second request carries the tool call and its result, and offers the tool.
    const second = JSON.stringify(fake.requests[1]!.body);
    expect(second).toContain("call_1");
    expect(second).toContain("current_time");
    expect(second).toContain("What time is it?");
  });

  it("ends the turn with reason error when the provider refuses, and keeps serving the next prompt", async ({ rt, fake }) => {
    fake.reset();
    // A permanent refusal: transient failures are retried (provider-reliability.test.ts).
    fake.enqueue({ status: 400, message: "bad request body" }, { text: ["Recovered."] });
    const s = await createSession(rt.db, { title: `${provider} errors`, model: { provider, model } });
    const id = asSessionId(s.id);
    await promptSession(rt.db, id, { text: "first" });
    await promptSession(rt.db, id, { text: "second" });
    const events = await waitForTurns(rt.db, id, 2);
    const ends = turnEnds(events);
    expect(ends[0]).toMatchObject({ reason: "error", error: `${provider}:${model}: 400 request refused: bad request body` });
    expect(ends[1]).toMatchObject({ reason: "completed" });
  });
});

describe.each([
  { provider: "openai-compatible" as const, model: "fake-gpt", key: "sk-test-openai", message: "Incorrect API key provided: {key}." },
  { provider: "anthropic" as const, model: "fake-claude", key: "sk-test-anthropic", message: "invalid x-api-key {key}" },
])("a $provider error that echoes the API key", ({ provider, model, key, message }) => {
  it("reaches the transcript, the turn end and the log with the key redacted", async ({ rt, fake }) => {
    fake.reset();
    fake.enqueue({ status: 401, message });
    const s = await createSession(rt.db, { title: `${provider} leaks`, model: { provider, model } });
    const id = asSessionId(s.id);
    await promptSession(rt.db, id, { text: "hello" });
    const events = await waitForTurns(rt.db, id, 1);
    expect(JSON.stringify(fake.requests[0]!.headers)).toContain(key); // it really was sent and echoed
    const end = turnEnds(events)[0]!;
    expect(end).toMatchObject({ reason: "error", error: expect.stringContaining("[redacted]") });
    expect(end.error).toContain("401");
    expect(JSON.stringify(events)).not.toContain(key);
    expect(rt.logs.join("\n")).not.toContain(key);
  });
});

describe("a model that is not configured on this server", () => {
  it("ends the turn with reason error instead of stranding the agent", async () => {
    // Its own database: the runtime above has Anthropic configured and would take the session.
    const own = await createTestDatabase();
    const local = await startTestRuntime(own, { resolveModel: createModelResolver(parseEnv({})) });
    try {
      const s = await createSession(local.db, { title: "no key", model: { provider: "anthropic", model: "x" } });
      const id = asSessionId(s.id);
      await promptSession(local.db, id, { text: "hello?" });
      const events = await waitForTurns(local.db, id, 1);
      expect(turnEnds(events)).toEqual([expect.objectContaining({ reason: "error", error: expect.stringContaining("not configured") })]);
    } finally {
      await local.stop();
      await own.drop();
    }
  });
});

