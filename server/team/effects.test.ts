import { describe, expect, it } from "vitest";
import { asSessionId, type SessionId } from "../ids";
import type { PayloadOf, SessionEvent } from "../runtime/events";
import { toModelMessages, visibleEvents } from "../runtime/history";
import { promptSession } from "../runtime/sessions";
import { childProcessDatabase, spawnRuntime, waitForLine } from "../testing/runtime-child";
import { eventsOf, newTestSession, waitFor } from "../testing/runtime-harness";
import { createTask } from "./task-board";
import { leadOf } from "../members/membership";
import { workspaceLimits } from "../../shared/limits";
import { readFile, writeFile } from "../workspace";

// Every Team and Workspace tool with a durable effect, with a real runtime process SIGKILLed in the window
// after the effect committed and before its result was reported (the process stops there on
// RUNTIME_PAUSE_AFTER_EFFECT). A second process then adopts the Lead: the effect exists exactly
// once, and the Lead's history holds the tool's real result, not "the tool did not run".

const TEST_TIMEOUT = 180_000;
const WAIT_MS = 60_000;

const t = childProcessDatabase();

const CHILD_ENV = { RUNTIME_TEAM: "1", SCRIPTED_MODEL_DELAY_MS: "0", AGENT_LEASE_TTL_MS: "1000", RUNTIME_RECOVERY_INTERVAL_MS: "200" };

/** An active teammate with no work (nothing drives it until a message arrives). */
async function quietTeammate(lead: SessionId, name: string): Promise<SessionId> {
  const id = asSessionId(`ses_${name}_${lead.slice(-10)}`);
  await t.db.session.create({ data: { id, teamId: lead, memberName: name, title: name, model: { provider: "scripted", model: "keyless" } } });
  await t.db.teamMember.create({ data: { teamId: lead, name, sessionId: id, description: name, context: "fresh", phase: "active" } });
  return id;
}

interface Window {
  lead: SessionId;
  callKey: string;
  /** The Lead's log when the first process was killed. */
  atKill: SessionEvent[];
  /** The Lead's log once the second process settled it. */
  after: SessionEvent[];
  result: PayloadOf<"tool_result">;
}

/**
 * Prompts the Lead to call `tool` with `input`, kills the process in the tool's crash window,
 * lets a second process recover, and returns the Lead's tool result for that call.
 */
async function crashInWindow(lead: SessionId, tool: string, input: unknown): Promise<Window> {
  const first = await spawnRuntime(t, { ...CHILD_ENV, RUNTIME_PAUSE_AFTER_EFFECT: tool });
  await promptSession(t.db, lead, { text: `/tool ${tool} ${JSON.stringify(input)}` });
  const paused = await waitForLine(first, new RegExp(`^PAUSED ${tool} `), WAIT_MS);
  const callKey = paused.split(" ")[2]!;
  await first.kill("SIGKILL");
  const atKill = await eventsOf(t.db, lead);

  await spawnRuntime(t, CHILD_ENV);
  const after = await waitFor(
    async () => {
      const events = await eventsOf(t.db, lead);
      const row = await t.db.session.findUniqueOrThrow({ where: { id: lead }, select: { activeTurnId: true } });
      // The cut turn closed, and the resumed turn (the restart notice) finished too.
      const ends = events.filter((e) => e.payload.kind === "turn_end");
      return ends.length >= 2 && row.activeTurnId === null ? events : null;
    },
    WAIT_MS,
    "the Lead's recovered turns",
  );
  const callId = callKey.split("/")[1]!;
  const results = after.flatMap((e) => (e.payload.kind === "tool_result" && e.payload.toolCallId === callId ? [e.payload] : []));
  expect(results, "exactly one result for the call").toHaveLength(1);
  const result = results[0]!;
  expect(result.isError).toBe(false);
  // The model is told the same: no synthetic "did not run" for this call.
  const told = toModelMessages(visibleEvents(after))
    .flatMap((m) => (m.role === "tool" ? m.results : []))
    .filter((r) => r.toolCallId === callId);
  expect(told).toEqual([expect.objectContaining({ isError: false, output: result.output })]);
  expect(after.find((e) => e.payload.kind === "turn_end")?.payload).toMatchObject({ reason: "interrupted" });
  return { lead, callKey, atKill, after, result };
}

function resultIn(events: SessionEvent[], callKey: string): boolean {
  const callId = callKey.split("/")[1];
  return events.some((e) => e.payload.kind === "tool_result" && e.payload.toolCallId === callId);
}

describe("a tool's effect and its result are one fact across a crash", () => {
  it("team_task_create: the task and its result commit together", { timeout: TEST_TIMEOUT }, async () => {
    const lead = await newTestSession(t.db, "create");
    const w = await crashInWindow(lead, "team_task_create", { subject: "Write the plan", description: "d" });
    expect(resultIn(w.atKill, w.callKey), "the result committed with the task").toBe(true);
    const tasks = await t.db.teamTask.findMany({ where: { teamId: lead } });
    expect(tasks.map((t) => t.subject)).toEqual(["Write the plan"]);
    expect(w.result.output).toMatchObject({ id: "task-1", revision: 1, status: "pending" });
  });

  it("team_task_update: a claim that committed is reported, never retried into INVALID_TRANSITION", { timeout: TEST_TIMEOUT }, async () => {
    const lead = await newTestSession(t.db, "update");
    await createTask(t.db, leadOf(lead), { subject: "Claim me", description: "" });
    const w = await crashInWindow(lead, "team_task_update", { task_id: "task-1", expected_revision: 1, action: "claim" });
    expect(resultIn(w.atKill, w.callKey)).toBe(true);
    const task = await t.db.teamTask.findUniqueOrThrow({ where: { teamId_number: { teamId: lead, number: 1 } } });
    expect(task).toMatchObject({ revision: 2, status: "in_progress", ownerSessionId: lead });
    expect(w.result.output).toMatchObject({ id: "task-1", revision: 2, status: "in_progress", ownerName: "lead" });
  });

  it("interrupt_agent: the request and its result commit together", { timeout: TEST_TIMEOUT }, async () => {
    const lead = await newTestSession(t.db, "interrupt");
    const alpha = await quietTeammate(lead, "alpha");
    const w = await crashInWindow(lead, "interrupt_agent", { target: "alpha" });
    expect(resultIn(w.atKill, w.callKey)).toBe(true);
    expect(await t.db.session.findUniqueOrThrow({ where: { id: alpha }, select: { parked: true } })).toEqual({ parked: true });
    expect(w.result.output).toEqual({ previousStatus: "inactive" });
  });

  it("send_message: a message queued before the crash is delivered once and reported, never sent again", { timeout: TEST_TIMEOUT }, async () => {
    const lead = await newTestSession(t.db, "send");
    const alpha = await quietTeammate(lead, "alpha");
    const w = await crashInWindow(lead, "send_message", { target: "alpha", message: "the plan is ready" });
    expect(resultIn(w.atKill, w.callKey), "killed before the result").toBe(false);
    const rows = await t.db.teamMessage.findMany({ where: { senderSessionId: lead } });
    expect(rows.map((r) => ({ content: r.content, key: r.toolCallKey, state: r.state }))).toEqual([
      { content: "the plan is ready", key: w.callKey, state: "delivered" },
    ]);
    expect(w.result.output).toEqual({ messageId: rows[0]!.id, status: "accepted" });
    // In the target exactly once (its inbox or its history).
    const inTarget =
      (await t.db.inboxItem.count({ where: { sessionId: alpha, id: rows[0]!.id } })) +
      (await t.db.sessionEvent.count({ where: { sessionId: alpha, messageId: rows[0]!.id } }));
    expect(inTarget).toBe(1);
  });

  it("spawn_teammate: a reserved member is finished by recovery and reported as what it is", { timeout: TEST_TIMEOUT }, async () => {
    const lead = await newTestSession(t.db, "spawn");
    const w = await crashInWindow(lead, "spawn_teammate", { name: "alpha", description: "Helps", prompt: "Say hello", context: "fresh" });
    expect(resultIn(w.atKill, w.callKey)).toBe(false);
    const members = await t.db.teamMember.findMany({ where: { teamId: lead } });
    expect(members.map((m) => ({ name: m.name, phase: m.phase, key: m.toolCallKey }))).toEqual([
      { name: "alpha", phase: "active", key: w.callKey },
    ]);
    const children = await t.db.session.findMany({ where: { teamId: lead, memberName: { not: null } } });
    expect(children.map((c) => c.id)).toEqual([members[0]!.sessionId]);
    expect(w.result.output).toMatchObject({ name: "alpha", role: "teammate", context: "fresh" });
    expect((w.result.output as { status: string }).status).not.toMatch(/failed|provisioning/);
    // The teammate got its task exactly once and works on it.
    const child = asSessionId(members[0]!.sessionId);
    await waitFor(async () => (await eventsOf(t.db, child)).some((e) => e.payload.kind === "turn_end"), WAIT_MS, "alpha's first turn");
    const tasks = (await eventsOf(t.db, child)).filter((e) => e.payload.kind === "user_message" && e.payload.text === "Say hello");
    expect(tasks).toHaveLength(1);
  });

  it("workspace_write: exactly one new version, and the model is told its real result", { timeout: TEST_TIMEOUT }, async () => {
    const lead = await newTestSession(t.db, "write");
    await writeFile(t.db, lead, { kind: "member", member: leadOf(lead) }, { path: "plan.md", content: "v1" }, workspaceLimits());
    const w = await crashInWindow(lead, "workspace_write", { path: "plan.md", content: "v2 from the Lead", expected_version: 1 });
    expect(resultIn(w.atKill, w.callKey), "the result committed with the version").toBe(true);
    const versions = await t.db.workspaceVersion.findMany({ where: { teamId: lead, path: "plan.md" }, orderBy: { version: "asc" } });
    expect(versions.map((v) => v.version)).toEqual([1, 2]);
    expect((await readFile(t.db, lead, { path: "plan.md" })).content).toBe("v2 from the Lead");
    expect(w.result.output).toEqual({ path: "plan.md", version: 2, bytes: 16, warnings: [expect.stringMatching(/outside your write scopes/)] });
  });

  it("workspace_edit: the edit applies once; a retry would have found old_text gone", { timeout: TEST_TIMEOUT }, async () => {
    const lead = await newTestSession(t.db, "edit");
    await writeFile(t.db, lead, { kind: "member", member: leadOf(lead) }, { path: "a.md", content: "count: 1" }, workspaceLimits());
    const w = await crashInWindow(lead, "workspace_edit", { path: "a.md", old_text: "count: 1", new_text: "count: 2" });
    expect(resultIn(w.atKill, w.callKey)).toBe(true);
    expect((await readFile(t.db, lead, { path: "a.md" })).content).toBe("count: 2");
    expect(await t.db.workspaceVersion.count({ where: { teamId: lead, path: "a.md" } })).toBe(2);
    expect(w.result.output).toMatchObject({ path: "a.md", version: 2, replacements: 1 });
  });
});
