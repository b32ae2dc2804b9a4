import { describe, expect } from "vitest";
import { asSessionId, asTurnId, newMessageId, type SessionId } from "../ids";
import { defaultPlaybook } from "../models/scripted";
import { activityWaiter } from "../live/activity";
import { notifyActivity } from "../db/notify";
import { listInbox } from "../testing/inbox";
import { findOrphanedSessions } from "../runtime/lease";
import { createSession, forkSession, getSession, promptSession } from "../runtime/sessions";
import { runTool, toolSpec, type ToolOutcome } from "../runtime/tools";
import { runtimeTest } from "../testing/fixtures";
import { eventsOf, waitFor, waitForTurns } from "../testing/runtime-harness";
import type { ModelOption } from "../models/catalog";
import { listMembers } from "./roster";
import { initialTaskId, recoverProvisioning, reserveTeammate } from "./provisioning";
import { leadOf } from "../members/membership";
import { createTeamLayer } from "../team-layer";
import { TEAM_TOOLSET_OPTIONS } from "./tools";

// The nine Team tools called the way the runtime calls them (runTool), plus the identity rules
// of SPEC.md §5 (identity decision) observed in real model requests.

const code = (o: ToolOutcome) => (o.isError ? o.errorCode : "ok");

/** What this test server offers: the keyless model and a second one (run by the scripted model here). */
const OFFERED: ModelOption[] = [
  { provider: "scripted", model: "keyless", label: "Keyless", price: { input: 0, output: 0 } },
  { provider: "openai-compatible", model: "gpt-small", label: "GPT small", price: { input: 0.15, output: 0.6 } },
];

// Teammates here just answer (default playbook); tests drive the tools directly.
const it = runtimeTest({
  team: { limits: { maxMembers: 3 }, provisioningGraceMs: 60_000 },
  playbook: defaultPlaybook,
}).extend("helpers", { scope: "file" }, ({ rt }) => {
  const layer = createTeamLayer(rt.db, rt.hub, { limits: { maxMembers: 3 }, models: OFFERED });
  const tools = new Map(layer.toolsFor(asSessionId("x")).tools.map((t) => [t.name, t]));

  function callWith(signal: AbortSignal, sessionId: SessionId, name: string, input: unknown): Promise<ToolOutcome> {
    const scope = { db: rt.db, sessionId, turnId: asTurnId("turn_test"), callKey: `${newMessageId()}/test`, signal };
    return runTool(tools, name, input, scope, TEAM_TOOLSET_OPTIONS);
  }
  const call = (sessionId: SessionId, name: string, input: unknown) => callWith(new AbortController().signal, sessionId, name, input);

  async function newLead(title = "lead") {
    return asSessionId((await createSession(rt.db, { title, model: { provider: "scripted", model: "keyless" } })).id);
  }
  async function spawn(lead: SessionId, name: string, context: "fresh" | "fork" = "fresh") {
    const out = await call(lead, "spawn_teammate", { name, description: `${name} helps`, prompt: `Task for ${name}`, context });
    expect(code(out)).toBe("ok");
    const member = (await listMembers(rt.db, lead)).find((m) => m.name === name)!;
    return asSessionId(member.sessionId);
  }

  /**
   * Runs `fn` while Postgres refuses to create the session of the member `name` — with a plain
   * error (a real refusal) or with `errcode` (e.g. admin_shutdown: the database going away).
   */
  async function whileSessionsRefused(name: string, errcode: string | null, fn: () => Promise<void>): Promise<void> {
    const using = errcode ? ` USING ERRCODE = '${errcode}'` : "";
    await rt.db.$executeRawUnsafe(`CREATE OR REPLACE FUNCTION refuse_session() RETURNS trigger AS $$
      BEGIN IF NEW.member_name = '${name}' THEN RAISE EXCEPTION 'no sessions for ${name}'${using}; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`);
    await rt.db.$executeRawUnsafe(`CREATE TRIGGER refuse_session BEFORE INSERT ON sessions FOR EACH ROW EXECUTE FUNCTION refuse_session()`);
    try {
      await fn();
    } finally {
      await rt.db.$executeRawUnsafe(`DROP TRIGGER refuse_session ON sessions`);
    }
  }

  return { callWith, call, newLead, spawn, whileSessionsRefused };
});

describe("the tool set", () => {
  // That every member's requests carry the same tools is checked on real requests in policy.test.ts.
  it("is exactly the nine Team tools, then the six Workspace tools, then the two Memory tools, then ask_humans", ({ rt }) => {
    const a = createTeamLayer(rt.db, rt.hub).toolsFor(asSessionId("a"));
    expect(a.tools.map((t) => t.name)).toEqual([
      "spawn_teammate",
      "send_message",
      "list_agents",
      "wait_agent",
      "interrupt_agent",
      "team_task_create",
      "team_task_list",
      "team_task_get",
      "team_task_update",
      "workspace_list",
      "workspace_read",
      "workspace_write",
      "workspace_edit",
      "workspace_delete",
      "workspace_search",
      "memory_search",
      "memory_propose",
      "ask_humans",
    ]);
    expect(a.tools.map(toolSpec).every((t) => t.inputSchema.type === "object")).toBe(true);
    expect(a.options?.invalidInputCode).toBe("TEAM_INVALID_ARGUMENT");
  });

  it("rejects bad arguments with TEAM_INVALID_ARGUMENT", async ({ rt, helpers: { call, newLead } }) => {
    const lead = await newLead();
    expect(code(await call(lead, "send_message", { target: "x" }))).toBe("TEAM_INVALID_ARGUMENT");
    expect(code(await call(lead, "team_task_get", { task_id: "nope" }))).toBe("TEAM_INVALID_ARGUMENT");
    // Text Postgres cannot store is refused before anything runs: no member row is left behind.
    expect(code(await call(lead, "spawn_teammate", { name: "nul", description: "d", prompt: "p\u0000" }))).toBe("TEAM_INVALID_ARGUMENT");
    expect(code(await call(lead, "team_task_create", { subject: "s", description: "\uD800" }))).toBe("TEAM_INVALID_ARGUMENT");
    expect(code(await call(lead, "team_task_update", { task_id: "task-1", expected_revision: 2 ** 31, action: "claim" }))).toBe(
      "TEAM_INVALID_ARGUMENT",
    );
    expect(await rt.db.teamMember.count({ where: { teamId: lead } })).toBe(0);
    expect(code(await call(lead, "spawn_teammate", { name: "a", description: "d", prompt: "p", extra: 1 }))).toBe(
      "TEAM_INVALID_ARGUMENT",
    );
  });
});

describe("spawn_teammate and the roster", () => {
  it("is Lead only, validates names, reserves them forever and enforces the member limit", async ({ rt, helpers: { call, newLead, spawn } }) => {
    const lead = await newLead();
    const helper = await spawn(lead, "helper");
    expect(code(await call(helper, "spawn_teammate", { name: "other", description: "d", prompt: "p" }))).toBe("TEAM_LEAD_REQUIRED");
    for (const bad of ["Lead", "-bad", "bad-", "bad_name", "x".repeat(65), "lead"]) {
      expect(code(await call(lead, "spawn_teammate", { name: bad, description: "d", prompt: "p" }))).toBe("TEAM_INVALID_MEMBER_NAME");
    }
    expect(code(await call(lead, "spawn_teammate", { name: "helper", description: "d", prompt: "p" }))).toBe(
      "TEAM_MEMBER_NAME_TAKEN",
    );

    // A member that crashed in provisioning fails, keeps its name, and counts toward the limit.
    await rt.db.teamMember.create({
      data: { teamId: lead, name: "ghost", sessionId: "ses_ghost_never_created", description: "d", context: "fresh", phase: "provisioning" },
    });
    expect(await recoverProvisioning(rt.db, 0)).toBeGreaterThanOrEqual(1);
    const ghost = (await listMembers(rt.db, lead)).find((m) => m.name === "ghost")!;
    expect(ghost).toMatchObject({ phase: "failed", status: "failed", diagnostic: expect.stringContaining("interrupted") });
    expect(code(await call(lead, "spawn_teammate", { name: "ghost", description: "d", prompt: "p" }))).toBe("TEAM_MEMBER_NAME_TAKEN");

    await spawn(lead, "third");
    expect(code(await call(lead, "spawn_teammate", { name: "fourth", description: "d", prompt: "p" }))).toBe("TEAM_MEMBER_LIMIT");

    const listed = await call(helper, "list_agents", {});
    expect((listed.output as { agents: { name: string }[] }).agents.map((a) => a.name)).toEqual(["lead", "helper", "ghost", "third"]);
  });

  it("settles a member whose child already holds its initial task as active, without a model call", async ({ rt, helpers: { newLead } }) => {
    const lead = await newLead();
    const child = asSessionId("ses_recovered_child_0001");
    await rt.db.teamMember.create({
      data: { teamId: lead, name: "half-done", sessionId: child, description: "d", context: "fresh", phase: "provisioning" },
    });
    await rt.db.session.create({ data: { id: child, teamId: lead, memberName: "half-done", title: "half-done", model: { provider: "scripted", model: "keyless" } } });
    await rt.db.inboxItem.create({
      data: { sessionId: child, id: initialTaskId(child), mode: "queue", text: "the task", source: { kind: "system" } },
    });
    await recoverProvisioning(rt.db, 0);
    expect((await listMembers(rt.db, lead)).find((m) => m.name === "half-done")?.phase).toBe("active");
  });
});

describe("spawn_teammate's model", () => {
  it("lists the offered models in the tool's description, the same text for every member", ({ rt }) => {
    const spec = (id: string) => toolSpec(createTeamLayer(rt.db, rt.hub, { models: OFFERED }).toolsFor(asSessionId(id)).tools[0]!);
    expect(spec("a").description).toContain('"openai-compatible:gpt-small" (GPT small; $0.15 in, $0.6 out per million tokens)');
    expect(spec("a").description).toContain('"scripted:keyless" (Keyless; free)');
    expect(spec("b")).toEqual(spec("a"));
    expect((spec("a").inputSchema.properties as Record<string, unknown>).model).toMatchObject({ type: "string" });
  });

  it("defaults to the Lead's, takes an offered one, and refuses any other with MODEL_UNAVAILABLE persisting nothing", async ({ rt, helpers: { call, newLead, spawn } }) => {
    const lead = await newLead();
    const plain = await spawn(lead, "plain");
    const out = await call(lead, "spawn_teammate", { name: "small", description: "d", prompt: "p", model: "openai-compatible:gpt-small" });
    expect(code(out)).toBe("ok");
    const roster = await listMembers(rt.db, lead);
    expect(roster.find((m) => m.name === "plain")?.model).toEqual({ provider: "scripted", model: "keyless" });
    expect(roster.find((m) => m.name === "small")?.model).toEqual({ provider: "openai-compatible", model: "gpt-small" });
    const small = asSessionId(roster.find((m) => m.name === "small")!.sessionId);
    expect((await getSession(rt.db, small)).model).toEqual({ provider: "openai-compatible", model: "gpt-small" });
    expect((await getSession(rt.db, plain)).model).toEqual({ provider: "scripted", model: "keyless" });

    for (const model of ["anthropic:claude-x", "openai-compatible:gpt-small:extra", "gpt-small"]) {
      const refused = await call(lead, "spawn_teammate", { name: "nope", description: "d", prompt: "p", model });
      expect(code(refused)).toBe("MODEL_UNAVAILABLE");
      // Readable: it names what may be chosen.
      expect(JSON.stringify(refused.output)).toContain("openai-compatible:gpt-small");
    }
    expect(await rt.db.teamMember.count({ where: { teamId: lead, name: "nope" } })).toBe(0);
    expect(code(await call(lead, "spawn_teammate", { name: "nope", description: "d", prompt: "p" }))).toBe("ok");
  });

  it("is kept on the member row, so recovery creates the child with it", async ({ rt, helpers: { newLead } }) => {
    const lead = await newLead();
    // Reserved, then cut short before the child existed (no completeProvisioning).
    await reserveTeammate(rt.db, leadOf(lead), { name: "later", description: "d", prompt: "p", context: "fresh", model: "openai-compatible:gpt-small" }, { models: OFFERED });
    expect((await listMembers(rt.db, lead)).find((m) => m.name === "later")).toMatchObject({
      phase: "provisioning",
      model: { provider: "openai-compatible", model: "gpt-small" },
    });
    expect(await recoverProvisioning(rt.db, 0)).toBeGreaterThanOrEqual(1);
    const member = (await listMembers(rt.db, lead)).find((m) => m.name === "later")!;
    expect(member.phase).toBe("active");
    expect((await getSession(rt.db, asSessionId(member.sessionId))).model).toEqual({ provider: "openai-compatible", model: "gpt-small" });
  });
});

describe("send_message, wait_agent, interrupt_agent", () => {
  it("refuses self, unknown and non-active targets", async ({ helpers: { call, newLead, spawn } }) => {
    const lead = await newLead();
    const a = await spawn(lead, "alpha");
    expect(code(await call(a, "send_message", { target: "alpha", message: "hi" }))).toBe("TEAM_SELF_MESSAGE");
    expect(code(await call(lead, "send_message", { target: "lead", message: "hi" }))).toBe("TEAM_SELF_MESSAGE");
    expect(code(await call(a, "send_message", { target: "nobody", message: "hi" }))).toBe("TEAM_MEMBER_NOT_FOUND");
    const ok = await call(a, "send_message", { target: "lead", message: "hello lead" });
    expect(ok.output).toMatchObject({ status: "accepted", messageId: expect.any(String) });
  });

  it("counts a teammate waiting for a person's decision as progress", async ({ rt, helpers: { call, newLead, spawn } }) => {
    const lead = await newLead();
    const a = await spawn(lead, "asker");
    await waitForTurns(rt.db, a, 1);
    expect((await call(lead, "wait_agent", {})).output).toMatchObject({ noProgress: true });
    // Its turn goes on once the person decides: the wait waits (here until a message comes).
    await rt.db.session.update({ where: { id: a }, data: { waitingFor: "approval" } });
    const blocked = call(lead, "wait_agent", { timeout_ms: 60_000 });
    await call(a, "send_message", { target: "lead", message: "still waiting for a person" });
    expect((await blocked).output).toEqual({ timedOut: false });
  });

  it("validates the wait timeout, reports no progress at once, and wakes on a later change", async ({ rt, helpers: { call, newLead, spawn } }) => {
    const lead = await newLead();
    expect(code(await call(lead, "wait_agent", { timeout_ms: 5 }))).toBe("TEAM_INVALID_TIMEOUT");
    expect(code(await call(lead, "wait_agent", { timeout_ms: 4_000_000 }))).toBe("TEAM_INVALID_TIMEOUT");
    const a = await spawn(lead, "waiter");
    await waitForTurns(rt.db, a, 1);
    const idle = await call(lead, "wait_agent", {});
    expect(idle.output).toMatchObject({ noProgress: true });

    // Input waiting for a teammate counts as progress (written here without waking anyone),
    // so the wait blocks; a message to the waiting Lead after the call started wakes it.
    await rt.db.inboxItem.create({ data: { sessionId: a, id: "msg_pending_work", mode: "queue", text: "later", source: { kind: "human" } } });
    const listening = rt.hub.listenerCount(lead);
    const waiting = call(lead, "wait_agent", { timeout_ms: 60_000 });
    // Once the wait listens, a later change cannot be missed (it subscribes before checking).
    await waitFor(() => rt.hub.listenerCount(lead) > listening, 10_000, "the wait to listen");
    await call(a, "send_message", { target: "lead", message: "news" });
    expect((await waiting).output).toEqual({ timedOut: false });
  });

  it("interrupt_agent is Lead only and keeps the teammate's inbox parked until it is messaged", async ({ rt, helpers: { call, newLead, spawn } }) => {
    const lead = await newLead();
    const a = await spawn(lead, "busy");
    const b = await spawn(lead, "peer");
    expect(code(await call(b, "interrupt_agent", { target: "busy" }))).toBe("TEAM_LEAD_REQUIRED");
    expect(code(await call(lead, "interrupt_agent", { target: "lead" }))).toBe("TEAM_INVALID_TARGET");
    await waitForTurns(rt.db, a, 1);
    const out = await call(lead, "interrupt_agent", { target: "busy" });
    expect(out.output).toMatchObject({ previousStatus: expect.any(String) });
    // Input already waiting when the interrupt parked the inbox: a wake alone does not run it.
    await rt.db.inboxItem.create({ data: { sessionId: a, id: "msg_parked", mode: "queue", text: "parked prompt", source: { kind: "human" } } });
    // The idle driver reports idle whenever it has looked at its inbox and found nothing to
    // run: marked running beforehand, its return to idle shows the wake was handled.
    await rt.db.session.update({ where: { id: a }, data: { status: "running" } });
    await notifyActivity(rt.db, a, "inbox");
    await waitFor(async () => (await rt.db.session.findUniqueOrThrow({ where: { id: a } })).status === "idle", 10_000, "the wake handled");
    expect((await listInbox(rt.db, a)).map((i) => i.text)).toEqual(["parked prompt"]);
    expect(await rt.db.sessionEvent.count({ where: { sessionId: a, messageId: "msg_parked" } })).toBe(0);
    // The next waking input (a message) un-parks it: the parked prompt and the message both run.
    await call(lead, "send_message", { target: "busy", message: "wake up" });
    await waitFor(async () => (await listInbox(rt.db, a)).length === 0, 10_000, "the parked inbox to drain");
  });
});

describe("team identity (SPEC.md §5)", () => {
  it("gives a fresh teammate its identity in its first request, and nothing new while unchanged", async ({ rt, helpers: { newLead, spawn } }) => {
    const lead = await newLead("Identity team");
    const a = await spawn(lead, "scribe");
    const events = await waitForTurns(rt.db, a, 1);
    const first = events.find((e) => e.payload.kind === "user_message" && e.payload.source.kind === "runtime_context");
    expect(first?.payload.kind === "user_message" && first.payload.text).toContain("Role: teammate. Your name in the team is `scribe`");
    // The initial task holds only the task text.
    expect(events.find((e) => e.payload.kind === "user_message" && e.payload.source.kind === "team")?.payload).toMatchObject({
      text: "Task for scribe",
    });
    await promptSession(rt.db, a, { text: "again" });
    const after = await waitForTurns(rt.db, a, 2);
    expect(after.filter((e) => e.payload.kind === "user_message" && e.payload.source.kind === "runtime_context")).toHaveLength(1);
  });

  it("a fork of a teammate is an independent Lead and gets a snapshot saying so", async ({ rt, helpers: { newLead, spawn } }) => {
    const lead = await newLead("Fork source team");
    const a = await spawn(lead, "forkable");
    await waitForTurns(rt.db, a, 1);
    const fork = asSessionId((await forkSession(rt.db, a, {})).id);
    expect((await listMembers(rt.db, fork)).map((m) => m.name)).toEqual(["lead"]);
    await promptSession(rt.db, fork, { text: "who am I now?" });
    const events = await waitForTurns(rt.db, fork, 2);
    const snaps = events.filter((e) => e.payload.kind === "user_message" && e.payload.source.kind === "runtime_context");
    expect(snaps).toHaveLength(2);
    expect(snaps[1]!.payload.kind === "user_message" && snaps[1]!.payload.text).toContain("Role: lead.");
  });

  it("a fork teammate starts from the Lead's completed turns", async ({ rt, helpers: { newLead, spawn } }) => {
    const lead = await newLead("Fork teammate team");
    await promptSession(rt.db, lead, { text: "context the fork should inherit" });
    await waitForTurns(rt.db, lead, 1);
    const f = await spawn(lead, "forked", "fork");
    const events = await eventsOf(rt.db, f);
    expect(events.some((e) => e.payload.kind === "user_message" && e.payload.text === "context the fork should inherit")).toBe(true);
    const done = await waitForTurns(rt.db, f, 2);
    const last = done.filter((e) => e.payload.kind === "user_message" && e.payload.source.kind === "runtime_context").at(-1)!;
    expect(last.payload.kind === "user_message" && last.payload.text).toContain("Your name in the team is `forked`");
  });
});

describe("members that are not active", () => {
  it("provisioning and failed members show their status everywhere, are never driven, and cannot be messaged", async ({ rt, helpers: { call, newLead, spawn } }) => {
    const lead = await newLead();
    const a = await spawn(lead, "sender");
    // A failed member whose session exists and holds input: it shows failed and nobody drives it.
    const doomed = asSessionId("ses_failed_member_0001");
    await rt.db.teamMember.create({ data: { teamId: lead, name: "broken", sessionId: doomed, description: "d", context: "fresh", phase: "provisioning" } });
    await rt.db.session.create({ data: { id: doomed, teamId: lead, memberName: "broken", title: "broken", model: { provider: "scripted", model: "keyless" } } });
    await recoverProvisioning(rt.db, 0);
    await rt.db.teamMember.create({
      data: { teamId: lead, name: "pending", sessionId: "ses_pending_member_01", description: "d", context: "fresh", phase: "provisioning" },
    });
    await rt.db.inboxItem.create({ data: { sessionId: doomed, id: "msg_never_runs", mode: "queue", text: "never", source: { kind: "human" } } });

    const roster = await listMembers(rt.db, lead);
    expect(roster.find((m) => m.name === "pending")).toMatchObject({ phase: "provisioning", status: "provisioning" });
    expect(roster.find((m) => m.name === "broken")).toMatchObject({ phase: "failed", status: "failed" });
    expect((await getSession(rt.db, doomed)).status).toBe("failed");
    expect(await findOrphanedSessions(rt.db)).not.toContain(doomed);
    expect(await rt.runtime.wake(doomed)).toBeUndefined();
    expect(rt.runtime.residentIds()).not.toContain(doomed);

    for (const target of ["pending", "broken"]) {
      expect(code(await call(a, "send_message", { target, message: "hi" }))).toBe("TEAM_INVALID_TARGET");
    }
    expect(code(await call(doomed, "send_message", { target: "lead", message: "let me in" }))).toBe("TEAM_NOT_MEMBER");
    expect(await rt.db.teamMessage.count({ where: { teamId: lead } })).toBe(0);
  });

  it("a spawn the database really refuses ends failed with the reason; the name stays reserved", async ({ rt, helpers: { call, newLead, whileSessionsRefused } }) => {
    const lead = await newLead();
    // A real refusal from Postgres for this one name (not an outage).
    await whileSessionsRefused("doomed", null, async () => {
      const out = await call(lead, "spawn_teammate", { name: "doomed", description: "d", prompt: "p" });
      expect(out.isError).toBe(false);
      expect(out.output).toMatchObject({ name: "doomed", status: "failed", diagnostic: expect.stringContaining("no sessions for doomed") });
      expect(await rt.db.session.count({ where: { teamId: lead, memberName: "doomed" } })).toBe(0);
    });
    expect(code(await call(lead, "spawn_teammate", { name: "doomed", description: "d", prompt: "p" }))).toBe("TEAM_MEMBER_NAME_TAKEN");
  });
});

describe("a spawn cut short by the database going away", () => {
  it("is reported as provisioning, not failed, and recovery finishes it without a model call", async ({ rt, helpers: { call, newLead, whileSessionsRefused } }) => {
    const lead = await newLead();
    // The child's insert fails the way a server shutting down fails a statement (57P01).
    await whileSessionsRefused("resilient", "admin_shutdown", async () => {
      const out = await call(lead, "spawn_teammate", { name: "resilient", description: "d", prompt: "Keep going" });
      expect(out.isError).toBe(false);
      expect(out.output).toMatchObject({ name: "resilient", status: "provisioning", diagnostic: expect.stringContaining("finishes automatically") });
      // While the outage lasts, recovery leaves it provisioning.
      await recoverProvisioning(rt.db, 0);
      expect((await listMembers(rt.db, lead)).find((m) => m.name === "resilient")?.phase).toBe("provisioning");
    });
    expect(await recoverProvisioning(rt.db, 0)).toBeGreaterThanOrEqual(1);
    const member = (await listMembers(rt.db, lead)).find((m) => m.name === "resilient")!;
    expect(member.phase).toBe("active");
    const events = await waitForTurns(rt.db, asSessionId(member.sessionId), 1);
    expect(events.filter((e) => e.payload.kind === "user_message" && e.payload.text === "Keep going")).toHaveLength(1);
  });

  it("fails with the reason once recovery has tried for longer than the give-up age", async ({ rt, helpers: { newLead, whileSessionsRefused } }) => {
    const lead = await newLead();
    await whileSessionsRefused("hopeless", "admin_shutdown", async () => {
      await rt.db.teamMember.create({
        data: { teamId: lead, name: "hopeless", sessionId: "ses_hopeless_member1", description: "d", context: "fresh", phase: "provisioning", prompt: "p" },
      });
      await recoverProvisioning(rt.db, 0);
      expect((await listMembers(rt.db, lead)).find((m) => m.name === "hopeless")?.phase).toBe("provisioning");
      await recoverProvisioning(rt.db, 0, 0);
      expect((await listMembers(rt.db, lead)).find((m) => m.name === "hopeless")).toMatchObject({
        phase: "failed",
        diagnostic: expect.stringContaining("could not finish"),
      });
    });
  });
});

describe("wait_agent ends", () => {
  it("with timedOut when nothing changes before the timeout", { timeout: 30_000 }, async ({ rt, helpers: { call, newLead, spawn } }) => {
    const lead = await newLead();
    const a = await spawn(lead, "slowpoke");
    await waitForTurns(rt.db, a, 1);
    // Its driver goes idle after the turn's end, with a notification that must not land in the
    // wait: the status committed, then every notification so far delivered to the hub
    // (Postgres delivers them in commit order, so a marker sent now arrives after them).
    await waitFor(async () => (await getSession(rt.db, a)).status === "idle", 10_000, "the teammate idle");
    const marker = activityWaiter(rt.hub, "ses_hub_marker");
    await notifyActivity(rt.db.sql, "ses_hub_marker", "state");
    await marker.wait(10_000);
    marker.dispose();
    // The teammate looks busy (an open turn: no noProgress), and nothing announces a change
    // (written without a notification; its idle driver holds the lease, so no sweep adopts it).
    await rt.db.$executeRaw`UPDATE sessions SET active_turn_id = 'turn_held_open' WHERE id = ${a}`;
    try {
      const started = Date.now();
      const out = await call(lead, "wait_agent", { timeout_ms: 10_000 });
      expect(out.output).toEqual({ timedOut: true });
      expect(Date.now() - started).toBeGreaterThanOrEqual(9_900);
    } finally {
      await rt.db.$executeRaw`UPDATE sessions SET active_turn_id = NULL WHERE id = ${a}`;
    }
  });

  it("with TEAM_WAIT_ABORTED when the turn is aborted during the wait", async ({ rt, helpers: { callWith, newLead, spawn } }) => {
    const lead = await newLead();
    const a = await spawn(lead, "busybody");
    await waitForTurns(rt.db, a, 1);
    await rt.db.$executeRaw`UPDATE sessions SET active_turn_id = 'turn_held_open_2' WHERE id = ${a}`;
    try {
      const abort = new AbortController();
      const waiting = callWith(abort.signal, lead, "wait_agent", { timeout_ms: 60_000 });
      abort.abort();
      expect(code(await waiting)).toBe("TEAM_WAIT_ABORTED");
    } finally {
      await rt.db.$executeRaw`UPDATE sessions SET active_turn_id = NULL WHERE id = ${a}`;
    }
  });
});

describe("the Workspace tools", () => {
  const out = (o: ToolOutcome) => o.output as Record<string, unknown>;

  it("write, read, edit, list, search and delete as the calling member, with compact results", async ({ helpers: { call, newLead, spawn } }) => {
    const lead = await newLead("workspace tools");
    const alpha = await spawn(lead, "alpha");
    const w = await call(alpha, "workspace_write", { path: "./notes/plan.md", content: "# Plan\nstep one\nstep two\n" });
    expect(out(w)).toEqual({ path: "notes/plan.md", version: 1, bytes: 25, warnings: [expect.stringMatching(/no in-progress task/)] });
    const r = await call(lead, "workspace_read", { path: "notes/plan.md", start_line: 2, end_line: 3 });
    expect(out(r)).toEqual({ path: "notes/plan.md", version: 1, by: "alpha", start_line: 2, end_line: 3, total_lines: 4, content: "step one\nstep two" });

    expect(code(await call(lead, "workspace_edit", { path: "notes/plan.md", old_text: "step", new_text: "Step" }))).toBe("WORKSPACE_EDIT_NOT_UNIQUE");
    expect(code(await call(lead, "workspace_edit", { path: "notes/plan.md", old_text: "step three", new_text: "x" }))).toBe("WORKSPACE_EDIT_NOT_FOUND");
    const e = await call(lead, "workspace_edit", { path: "notes/plan.md", old_text: "step", new_text: "Step", replace_all: true });
    expect(out(e)).toMatchObject({ path: "notes/plan.md", version: 2, replacements: 2 });

    const stale = await call(alpha, "workspace_write", { path: "notes/plan.md", content: "mine", expected_version: 1 });
    expect(code(stale)).toBe("WORKSPACE_STALE_VERSION");
    expect(out(stale)).toEqual({ error: { code: "WORKSPACE_STALE_VERSION", message: expect.stringMatching(/at version 2, not version 1/) } });
    const same = await call(alpha, "workspace_write", { path: "notes/plan.md", content: "# Plan\nStep one\nStep two\n", expected_version: 2 });
    expect(out(same)).toEqual({ path: "notes/plan.md", version: 2, bytes: 25, unchanged: true });

    expect(out(await call(alpha, "workspace_list", {}))).toEqual({ files: [{ path: "notes/plan.md", bytes: 25, version: 2, by: "lead" }] });
    expect(out(await call(alpha, "workspace_search", { query: "step T", ignore_case: true }))).toEqual({ matches: [{ path: "notes/plan.md", line: 3, text: "Step two" }] });

    expect(code(await call(alpha, "workspace_delete", { path: "notes/plan.md", expected_version: 1 }))).toBe("WORKSPACE_STALE_VERSION");
    expect(out(await call(alpha, "workspace_delete", { path: "notes/plan.md", expected_version: 2 }))).toEqual({ path: "notes/plan.md", version: 3, deleted: true, warnings: expect.any(Array) });
    expect(code(await call(lead, "workspace_read", { path: "notes/plan.md" }))).toBe("WORKSPACE_NOT_FOUND");
  });

  it("a fork teammate shares its team's workspace; an ordinary fork gets its own copy", async ({ rt, helpers: { call, newLead, spawn } }) => {
    const lead = await newLead("shared workspace");
    const forky = await spawn(lead, "forky", "fork");
    expect(code(await call(forky, "workspace_write", { path: "shared.md", content: "from the fork teammate" }))).toBe("ok");
    expect(out(await call(lead, "workspace_read", { path: "shared.md" }))).toMatchObject({ by: "forky", content: "from the fork teammate" });
    const fork = asSessionId((await forkSession(rt.db, lead, {})).id);
    expect(code(await call(fork, "workspace_write", { path: "own.md", content: "only in the fork" }))).toBe("ok");
    expect(code(await call(lead, "workspace_read", { path: "own.md" }))).toBe("WORKSPACE_NOT_FOUND");
  });

  it("refuses bad paths and bad arguments as tool errors, persisting nothing", async ({ rt, helpers: { call, newLead } }) => {
    const lead = await newLead("workspace refusals");
    expect(code(await call(lead, "workspace_write", { path: "../etc/passwd", content: "x" }))).toBe("WORKSPACE_PATH_INVALID");
    expect(code(await call(lead, "workspace_write", { path: "a", content: "x\u0000" }))).toBe("TEAM_INVALID_ARGUMENT");
    expect(code(await call(lead, "workspace_write", { path: "a", content: "x", mode: "append" }))).toBe("TEAM_INVALID_ARGUMENT");
    expect(code(await call(lead, "workspace_edit", { path: "a", old_text: "", new_text: "x" }))).toBe("TEAM_INVALID_ARGUMENT");
    expect(code(await call(lead, "workspace_search", { query: "[", regex: true }))).toBe("WORKSPACE_INVALID_PATTERN");
    expect(await rt.db.workspaceVersion.count({ where: { teamId: lead } })).toBe(0);
  });
});
