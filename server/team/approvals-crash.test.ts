import { describe, expect, it } from "vitest";
import { inTx } from "../db/client";
import { asSessionId, type SessionId } from "../ids";
import { settleApproval } from "../runtime/approvals";
import type { SessionEvent } from "../runtime/events";
import { promptSession } from "../runtime/sessions";
import { childProcessDatabase, spawnRuntime, waitForLine } from "../testing/runtime-child";
import { eventsOf, newTestSession, waitFor } from "../testing/runtime-harness";
import { listFiles } from "../workspace";
import { pendingRequests } from "./approvals";

// Approvals across crashes, with real runtime processes SIGKILLed at each point of an approved
// call's life: while it waits (before the decision), after the decision and before any process
// ran the call, and after the call's effect committed but before its result was reported. In
// every case the call takes effect exactly once and the model reads its real result.

const TEST_TIMEOUT = 180_000;
const WAIT_MS = 60_000;
const t = childProcessDatabase();
const CHILD_ENV = { RUNTIME_TEAM: "1", SCRIPTED_MODEL_DELAY_MS: "0", AGENT_LEASE_TTL_MS: "1000", RUNTIME_RECOVERY_INTERVAL_MS: "200" };
const PERSON = { id: "usr_crash_tester", name: "Tess Tester" };

async function askFirst(lead: SessionId, tool: string): Promise<void> {
  await t.db.toolPolicy.create({ data: { teamId: lead, toolName: tool, mode: "ask", changedBy: PERSON } });
}

async function waitingId(lead: SessionId): Promise<string> {
  const [w] = await waitFor(async () => {
    const list = await pendingRequests(t.db.sql, lead);
    return list.length > 0 ? list : null;
  }, WAIT_MS, "a waiting request");
  return w!.id;
}

const approve = (lead: SessionId, id: string) => inTx(t.db, (tx) => settleApproval(tx, lead, id, PERSON, { status: "approved", note: null }));

/** The Lead's log once its turn has ended (the approved call's turn). */
function turnOver(lead: SessionId): Promise<SessionEvent[]> {
  return waitFor(
    async () => {
      const events = await eventsOf(t.db, lead);
      const row = await t.db.session.findUniqueOrThrow({ where: { id: lead }, select: { activeTurnId: true, waitingFor: true } });
      return row.activeTurnId === null && row.waitingFor === null && events.some((e) => e.payload.kind === "turn_end") ? events : null;
    },
    WAIT_MS,
    "the Lead's turn to end",
  );
}

const resultsOf = (events: SessionEvent[], tool: string) => events.flatMap((e) => (e.payload.kind === "tool_result" && e.payload.toolName === tool ? [e.payload] : []));

describe("an approved call takes effect exactly once across crashes", () => {
  it("killed while it waits, and decided while no process runs: the next process runs it once", { timeout: TEST_TIMEOUT }, async () => {
    const lead = await newTestSession(t.db, "crash-waiting");
    await askFirst(lead, "workspace_write");
    const first = await spawnRuntime(t, CHILD_ENV);
    await promptSession(t.db, lead, { text: '/tool workspace_write {"path":"a.md","content":"once","expected_version":0}' });
    const id = await waitingId(lead);
    await first.kill("SIGKILL");
    // The request outlived its process; the turn is open and waits.
    const row = await t.db.session.findUniqueOrThrow({ where: { id: lead }, select: { activeTurnId: true, waitingFor: true } });
    expect(row.activeTurnId).not.toBeNull();
    expect(row.waitingFor).toBe("approval");

    // Decided with no runtime alive: the decision is durable, the call has not run.
    await approve(lead, id);
    expect((await listFiles(t.db, lead)).files).toEqual([]);
    await spawnRuntime(t, CHILD_ENV);
    const events = await turnOver(lead);
    expect(resultsOf(events, "workspace_write")).toEqual([expect.objectContaining({ isError: false, output: expect.objectContaining({ path: "a.md", version: 1 }) })]);
    expect((await listFiles(t.db, lead)).files.map((f) => [f.path, f.version])).toEqual([["a.md", 1]]);
  });

  it("killed after the approved call's effect committed, before its result: recovered, never sent again", { timeout: TEST_TIMEOUT }, async () => {
    const lead = await newTestSession(t.db, "crash-during");
    const alpha = asSessionId(`ses_alpha_${lead.slice(-10)}`);
    await t.db.session.create({ data: { id: alpha, teamId: lead, memberName: "alpha", title: "alpha", model: { provider: "scripted", model: "keyless" } } });
    await t.db.teamMember.create({ data: { teamId: lead, name: "alpha", sessionId: alpha, description: "alpha", context: "fresh", phase: "active" } });
    await askFirst(lead, "send_message");
    const first = await spawnRuntime(t, { ...CHILD_ENV, RUNTIME_PAUSE_AFTER_EFFECT: "send_message" });
    await promptSession(t.db, lead, { text: '/tool send_message {"target":"alpha","message":"approved once"}' });
    await approve(lead, await waitingId(lead));
    const paused = await waitForLine(first, /^PAUSED send_message /, WAIT_MS);
    const callKey = paused.split(" ")[2]!;
    await first.kill("SIGKILL");

    await spawnRuntime(t, CHILD_ENV);
    const events = await waitFor(async () => {
      const ev = await eventsOf(t.db, lead);
      return resultsOf(ev, "send_message").length > 0 ? ev : null;
    }, WAIT_MS, "the send's result");
    const results = resultsOf(events, "send_message");
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ isError: false, output: { status: "accepted" } });
    const rows = await t.db.teamMessage.findMany({ where: { senderSessionId: lead } });
    expect(rows.map((r) => ({ content: r.content, key: r.toolCallKey }))).toEqual([{ content: "approved once", key: callKey }]);
  });

  it("a graceful shutdown while the approved call runs: the turn ends interrupted, the call is never run again", { timeout: TEST_TIMEOUT }, async () => {
    const lead = await newTestSession(t.db, "shutdown-during");
    const alpha = asSessionId(`ses_alpha_${lead.slice(-10)}`);
    await t.db.session.create({ data: { id: alpha, teamId: lead, memberName: "alpha", title: "alpha", model: { provider: "scripted", model: "keyless" } } });
    await t.db.teamMember.create({ data: { teamId: lead, name: "alpha", sessionId: alpha, description: "alpha", context: "fresh", phase: "active" } });
    await askFirst(lead, "send_message");
    const first = await spawnRuntime(t, { ...CHILD_ENV, RUNTIME_PAUSE_AFTER_EFFECT: "send_message", RUNTIME_DRIVE: "leads" });
    await promptSession(t.db, lead, { text: '/tool send_message {"target":"alpha","message":"approved, then shut down"}' });
    await approve(lead, await waitingId(lead));
    const paused = await waitForLine(first, /^PAUSED send_message /, WAIT_MS);
    const callKey = paused.split(" ")[2]!;
    // SIGTERM while the call is between its effect and its result.
    await first.kill("SIGTERM");
    await waitForLine(first, /^STOPPED$/, WAIT_MS);
    const stopped = await eventsOf(t.db, lead);
    expect(stopped.filter((e) => e.payload.kind === "turn_end").map((e) => e.payload)).toEqual([expect.objectContaining({ reason: "interrupted" })]);
    expect(resultsOf(stopped, "send_message")).toEqual([expect.objectContaining({ isError: false, output: expect.objectContaining({ status: "accepted" }) })]);

    // The next process resumes the agent from the notice; the approved call is not sent again.
    await spawnRuntime(t, { ...CHILD_ENV, RUNTIME_DRIVE: "leads" });
    const resumed = await waitFor(async () => {
      const ev = await eventsOf(t.db, lead);
      return ev.filter((e) => e.payload.kind === "turn_end").length >= 2 ? ev : null;
    }, WAIT_MS, "the resumed turn's end");
    expect(resultsOf(resumed, "send_message")).toHaveLength(1);
    const rows = await t.db.teamMessage.findMany({ where: { senderSessionId: lead } });
    expect(rows.map((r) => ({ content: r.content, key: r.toolCallKey }))).toEqual([{ content: "approved, then shut down", key: callKey }]);
  });
});
