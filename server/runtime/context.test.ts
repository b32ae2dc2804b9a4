import { describe, expect } from "vitest";
import { asSessionId, type SessionId } from "../ids";
import { defaultPlaybook } from "../models/scripted";
import type { ModelRequest } from "../models/types";
import { databaseTest } from "../testing/fixtures";
import { eventsOf, newTestSession, startTestRuntime, waitForTurns, type TestRuntime } from "../testing/runtime-harness";
import { ContextRegistry, type ContextProvider } from "./context-registry";
import type { SessionEvent } from "./events";
import { forkSession, promptSession } from "./sessions";

// Runtime context snapshots (SPEC.md §5) and compaction (§6), with a registry that
// has one required and one optional provider whose text the tests change.

const requests: ModelRequest[] = [];
let identity = "role: lead";
let weather = "sunny";

const providers: ContextProvider[] = [
  { name: "test:identity", required: true, render: () => identity },
  { name: "test:weather", required: false, render: () => `weather: ${weather}` },
];

/** `start(config)`: a runtime of this test's own, stopped after it (before the state resets). */
const it = databaseTest().extend("start", async ({ tdb }, { onCleanup }) => {
  let rt: TestRuntime | null = null;
  onCleanup(async () => {
    await rt?.stop();
    requests.length = 0;
    identity = "role: lead";
    weather = "sunny";
  });
  return async (config: { compactionBudgetTokens?: number } = {}) => {
    rt = await startTestRuntime(tdb, {
      config,
      playbook: (req) => {
        requests.push(req);
        return defaultPlaybook(req);
      },
      contextFor: () => new ContextRegistry(providers),
    });
    return rt;
  };
});

const snapshots = (events: SessionEvent[]) =>
  events.flatMap((e) => (e.payload.kind === "user_message" && e.payload.source.kind === "runtime_context" ? [e] : []));

async function turn(r: TestRuntime, id: SessionId, text: string, n: number) {
  await promptSession(r.db, id, { text });
  return waitForTurns(r.db, id, n);
}

describe("runtime context snapshots", () => {
  it("appends the full snapshot after the claimed input, and nothing while it is unchanged", async ({ start }) => {
    const r = await start();
    const id = await newTestSession(r.db);
    const first = await turn(r, id, "one", 1);
    const [snap] = snapshots(first);
    expect(snap?.payload).toMatchObject({ text: expect.stringContaining("role: lead") });
    expect(snap?.payload.kind === "user_message" && snap.payload.text).toContain("weather: sunny");
    const promptIdx = first.findIndex((e) => e.payload.kind === "user_message" && e.payload.text === "one");
    expect(first.indexOf(snap!)).toBe(promptIdx + 1);
    // The model's first request holds the snapshot.
    expect(requests[0]?.messages.some((m) => m.role === "user" && m.text.includes("role: lead"))).toBe(true);

    const later = await turn(r, id, "two", 2);
    expect(snapshots(later)).toHaveLength(1);
  });

  it("appends a new full snapshot when a section changes", async ({ start }) => {
    const r = await start();
    const id = await newTestSession(r.db);
    await turn(r, id, "one", 1);
    identity = "role: teammate";
    const events = await turn(r, id, "two", 2);
    const snaps = snapshots(events);
    expect(snaps).toHaveLength(2);
    const text = snaps[1]!.payload.kind === "user_message" ? snaps[1]!.payload.text : "";
    expect(text).toContain("role: teammate");
    expect(text).toContain("weather: sunny");
  });

  it("keeps required sections when optional context is switched off", async ({ start }) => {
    const r = await start();
    const id = await newTestSession(r.db);
    await turn(r, id, "one", 1);
    await r.db.session.update({ where: { id }, data: { optionalContext: false } });
    const events = await turn(r, id, "two", 2);
    const last = snapshots(events).at(-1)!.payload;
    expect(last.kind === "user_message" && last.text).toContain("role: lead");
    expect(last.kind === "user_message" && last.text).not.toContain("weather");
  });

  it("gives a fork the inherited history, then a new snapshot when its context differs", async ({ start }) => {
    const r = await start();
    const id = await newTestSession(r.db);
    await turn(r, id, "as a teammate", 1);
    const fork = await forkSession(r.db, id, {});
    const forkId = asSessionId(fork.id);
    identity = "role: lead (independent fork)";
    const events = await turn(r, forkId, "continue", 2);
    const snaps = snapshots(events);
    expect(snaps).toHaveLength(2);
    expect(snaps[1]!.payload.kind === "user_message" && snaps[1]!.payload.text).toContain("independent fork");
    // Unchanged context adds nothing on the fork's next turn.
    expect(snapshots(await turn(r, forkId, "again", 3))).toHaveLength(2);
  });
});

describe("compaction", () => {
  it("summarises completed turns over budget, keeps raw events, and re-admits the context", async ({ start }) => {
    const r = await start({ compactionBudgetTokens: 120 });
    const id = await newTestSession(r.db);
    await turn(r, id, "first prompt about apples", 1);
    await turn(r, id, "second prompt about pears", 2);
    const events = await turn(r, id, "third prompt about plums", 3);

    const compactions = events.filter((e) => e.payload.kind === "compaction");
    expect(compactions.length).toBeGreaterThanOrEqual(1);
    const c = compactions[0]!;
    const summary = events.find((e) => e.payload.kind === "user_message" && e.payload.source.kind === "compaction_summary");
    expect(summary?.payload.kind === "user_message" && summary.payload.text).toContain("apples");
    // Raw events stay in the log for the transcript.
    expect(events.some((e) => e.payload.kind === "user_message" && e.payload.text === "first prompt about apples")).toBe(true);
    // The snapshot the compaction removed is re-admitted right after it.
    expect(snapshots(events).some((s) => s.seq > c.seq)).toBe(true);

    // The model now sees the summary first, not the raw first prompt.
    const last = requests.filter((q) => q.purpose === "step").at(-1)!;
    expect(last.messages[0]).toMatchObject({ role: "user", text: expect.stringContaining("Summary of the conversation") });
    expect(last.messages.some((m) => m.role === "user" && m.text === "first prompt about apples")).toBe(false);
    expect(last.messages.some((m) => m.role === "user" && m.text.includes("role: lead"))).toBe(true);
    expect(requests.some((q) => q.purpose === "summary" && q.tools.length === 0)).toBe(true);
    expect((await eventsOf(r.db, id)).length).toBe(events.length);

    // The summary call is spent like a step: the session's spend is every call's usage.
    const used = events.flatMap((e) => (e.payload.kind === "assistant_message" || e.payload.kind === "compaction" ? [e.payload.usage] : []));
    expect(c.payload.kind === "compaction" && c.payload.usage?.inputTokens).toBeGreaterThan(0);
    const spend = await r.db.session.findUniqueOrThrow({ where: { id }, select: { spentInputTokens: true, spentOutputTokens: true } });
    expect(Number(spend.spentInputTokens)).toBe(used.reduce((n, u) => n + (u?.inputTokens ?? 0), 0));
    expect(Number(spend.spentOutputTokens)).toBe(used.reduce((n, u) => n + (u?.outputTokens ?? 0), 0));
  });
});
