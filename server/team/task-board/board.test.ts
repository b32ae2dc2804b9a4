import { describe, expect } from "vitest";
import { asJson, type Db } from "../../db/client";
import { AppError, type AppErrorCode } from "../../errors";
import { asSessionId, newSessionId } from "../../ids";
import { ActivityHub, type Activity } from "../../live/activity";
import { notifyActivity } from "../../db/notify";
import { SCRIPTED_CHOICE } from "../../models/choice";
import { createSession } from "../../runtime/sessions";
import { LIMITS } from "../../../shared/limits";
import type { TestDatabase } from "../../testing/db";
import { databaseTest } from "../../testing/fixtures";
import { leadOf, type Membership } from "../../members/membership";
import {
  createTask,
  getTask,
  listTasks,
  updateTask,
  type CreateTaskInput,
  type TaskView,
  type UpdateTaskInput,
} from "./index";

// The task board against real Postgres: every action, its authority and preconditions, every
// error code, readiness, the dependency DAG, ids, tombstones, limits, write-scope warnings and
// concurrent compare-and-set.

const it = databaseTest({ poolSize: 12 });
// The file's database and client (fixtures), bound once for the helpers below and the tests.
let tdb: TestDatabase;
let db: Db;
it.beforeAll(({ tdb: fileDb, db: fileClient }) => {
  tdb = fileDb;
  db = fileClient;
});

interface TestTeam {
  teamId: string;
  lead: Membership;
  alice: Membership;
  bob: Membership;
  create(by: Membership, input?: Partial<CreateTaskInput>, maxTasks?: number): Promise<TaskView>;
  update(by: Membership, task: TaskView, input: Omit<UpdateTaskInput, "taskId" | "expectedRevision">): Promise<TaskView>;
}

async function addMember(teamId: string, name: string, phase = "active"): Promise<Membership> {
  const id = newSessionId();
  await db.session.create({ data: { id, teamId, memberName: name, title: name, model: asJson(SCRIPTED_CHOICE) } });
  await db.teamMember.create({ data: { teamId, name, sessionId: id, description: `the ${name}`, context: "fresh", phase } });
  return { teamId: asSessionId(teamId), sessionId: id, name, isLead: false };
}

async function newTeam(): Promise<TestTeam> {
  const s = await createSession(db, { title: "lead", model: { provider: "scripted", model: "keyless" } });
  const teamId = s.id;
  const lead = leadOf(asSessionId(teamId));
  const alice = await addMember(teamId, "alice");
  const bob = await addMember(teamId, "bob");
  let n = 0;
  return {
    teamId,
    lead,
    alice,
    bob,
    create: (by, input = {}, maxTasks) =>
      // Acting on this team's board, whoever `by` is (members of other teams are refused).
      createTask(db, { ...by, teamId: lead.teamId }, { subject: `task ${++n}`, description: "", ...input }, maxTasks ? { maxTasks } : undefined),
    update: (by, task, input) =>
      updateTask(db, { ...by, teamId: lead.teamId }, { taskId: task.id, expectedRevision: task.revision, ...input }),
  };
}

async function expectCode(p: Promise<unknown>, code: AppErrorCode): Promise<AppError> {
  let error: unknown;
  try {
    await p;
  } catch (e) {
    error = e;
  }
  if (error === undefined) throw new Error(`expected ${code}, but the call succeeded`);
  if (!(error instanceof AppError)) throw error;
  expect(error.code, error.message).toBe(code);
  return error;
}

describe("createTask", () => {
  it("creates a pending, unowned, ready task at revision 1 with the next id", async () => {
    const t = await newTeam();
    const task = await t.create(t.alice, {
      subject: "  Write the parser  ",
      description: "Parse the input.",
      writeScopes: ["./src/parser/", "docs"],
    });
    expect(task).toEqual({
      id: "task-1",
      revision: 1,
      subject: "Write the parser",
      description: "Parse the input.",
      status: "pending",
      owner: null,
      ownerName: null,
      blockedBy: [],
      writeScopes: ["src/parser", "docs"],
      ready: true,
      warnings: [],
      createdBy: "alice",
      // A member's change names the member (a person's names the person).
      changedBy: { kind: "member", name: "alice" },
      createdAt: expect.any(Date),
      updatedAt: expect.any(Date),
    });
    const second = await t.create(t.lead, { blockedBy: ["task-1"] });
    expect(second).toMatchObject({ id: "task-2", createdBy: "lead", blockedBy: ["task-1"], ready: false });
    expect(await getTask(db, t.teamId, "task-2")).toEqual(second);
    const team = await db.team.findUniqueOrThrow({ where: { id: t.teamId } });
    expect(team.nextTaskNumber).toBe(3);
  });

  it("keeps ids team-local", async () => {
    const a = await newTeam();
    const b = await newTeam();
    await a.create(a.lead);
    await a.create(a.lead);
    expect((await b.create(b.lead)).id).toBe("task-1");
    await expectCode(getTask(db, b.teamId, "task-2"), "TEAM_TASK_NOT_FOUND");
  });

  it("validates subject and description lengths", async () => {
    const t = await newTeam();
    await expectCode(t.create(t.alice, { subject: "" }), "TEAM_INVALID_ARGUMENT");
    await expectCode(t.create(t.alice, { subject: "   " }), "TEAM_INVALID_ARGUMENT");
    await expectCode(t.create(t.alice, { subject: "x".repeat(201) }), "TEAM_INVALID_ARGUMENT");
    // 200 characters (code points), whatever their byte length.
    expect((await t.create(t.alice, { subject: "é".repeat(150) + "🙂".repeat(50) })).subject).toHaveLength(250);
    expect(await t.create(t.alice, { subject: "x".repeat(200) })).toMatchObject({ status: "pending" });

    expect(await t.create(t.alice, { description: "d".repeat(LIMITS.taskDescriptionBytes) })).toMatchObject({ revision: 1 });
    await expectCode(t.create(t.alice, { description: "d".repeat(LIMITS.taskDescriptionBytes + 1) }), "TEAM_INVALID_ARGUMENT");
    // 16 KiB counts UTF-8 bytes: 8193 × "é" is 16386 bytes.
    await expectCode(t.create(t.alice, { description: "é".repeat(8193) }), "TEAM_INVALID_ARGUMENT");
    await expectCode(t.create(t.alice, { description: "a\u0000b" }), "TEAM_INVALID_ARGUMENT");
    await expectCode(
      createTask(db, t.alice, { subject: 42, description: "" } as unknown as CreateTaskInput),
      "TEAM_INVALID_ARGUMENT",
    );
  });

  it("validates dependencies", async () => {
    const t = await newTeam();
    const one = await t.create(t.lead);
    await expectCode(t.create(t.lead, { blockedBy: ["task-99"] }), "TEAM_TASK_NOT_FOUND");
    await expectCode(t.create(t.lead, { blockedBy: ["banana"] }), "TEAM_TASK_NOT_FOUND");
    await expectCode(t.create(t.lead, { blockedBy: ["task-01"] }), "TEAM_TASK_NOT_FOUND");
    await expectCode(t.create(t.lead, { blockedBy: ["task-1", "task-1"] }), "TEAM_INVALID_ARGUMENT");
    await t.update(t.lead, one, { action: "delete" });
    await expectCode(t.create(t.lead, { blockedBy: ["task-1"] }), "TEAM_TASK_DELETED");
  });

  it("normalises write scopes and rejects bad ones", async () => {
    const t = await newTeam();
    const task = await t.create(t.alice, { writeScopes: ["./src/", "src", "lib\\util", "  docs/  "] });
    expect(task.writeScopes).toEqual(["src", "lib/util", "docs"]);
    for (const bad of ["", ".", "..", "/etc", "C:\\x", "c:/x", "a//b", "a/../b", "../a"]) {
      await expectCode(t.create(t.alice, { writeScopes: ["ok", bad] }), "TEAM_INVALID_WRITE_SCOPE");
    }
  });

  it("does not use up an id when it fails", async () => {
    const t = await newTeam();
    await t.create(t.lead);
    await expectCode(t.create(t.lead, { blockedBy: ["task-7"] }), "TEAM_TASK_NOT_FOUND");
    await expectCode(t.create(t.lead, { writeScopes: ["/abs"] }), "TEAM_INVALID_WRITE_SCOPE");
    expect((await t.create(t.lead)).id).toBe("task-2");
  });

  it("enforces the live-task limit; deleted tasks free a slot, completed ones do not", async () => {
    const t = await newTeam();
    const [a, b, c] = [await t.create(t.lead, {}, 3), await t.create(t.lead, {}, 3), await t.create(t.lead, {}, 3)];
    const err = await expectCode(t.create(t.lead, {}, 3), "TEAM_TASK_LIMIT");
    expect(err.details).toMatchObject({ live: 3, maxTasks: 3 });

    const claimed = await t.update(t.lead, a!, { action: "claim" });
    await t.update(t.lead, claimed, { action: "complete" });
    await expectCode(t.create(t.lead, {}, 3), "TEAM_TASK_LIMIT");

    await t.update(t.lead, b!, { action: "delete" });
    const d = await t.create(t.lead, {}, 3);
    expect(d.id).toBe("task-4");
    await expectCode(t.create(t.lead, {}, 3), "TEAM_TASK_LIMIT");
    expect(c).toBeDefined();
  });

  it("accepts only members of the team", async () => {
    const t = await newTeam();
    const other = await newTeam();
    await expectCode(t.create(other.alice), "TEAM_NOT_MEMBER");
    await expectCode(t.create(other.lead), "TEAM_NOT_MEMBER");
    await expectCode(t.create({ ...t.alice, isLead: true }), "TEAM_NOT_MEMBER");
    await expectCode(t.create({ ...t.alice, name: "bob" }), "TEAM_NOT_MEMBER");
    await expectCode(t.create({ ...t.lead, isLead: false }), "TEAM_NOT_MEMBER");
    await expectCode(createTask(db, leadOf(asSessionId("ses_nope")), { subject: "x", description: "" }), "TEAM_NOT_MEMBER");
  });
});

describe("getTask", () => {
  it("reads tombstones and fails for unknown ids", async () => {
    const t = await newTeam();
    const task = await t.create(t.bob);
    const gone = await t.update(t.lead, task, { action: "delete" });
    expect(gone).toMatchObject({ id: "task-1", status: "deleted", revision: 2, ready: false });
    expect(await getTask(db, t.teamId, "task-1")).toEqual(gone);
    await expectCode(getTask(db, t.teamId, "task-2"), "TEAM_TASK_NOT_FOUND");
    await expectCode(getTask(db, t.teamId, "1"), "TEAM_TASK_NOT_FOUND");
    await expectCode(getTask(db, t.teamId, "task-99999999999"), "TEAM_TASK_NOT_FOUND");
  });
});

describe("ids", () => {
  it("are never reused, even after deletion", async () => {
    const t = await newTeam();
    const one = await t.create(t.lead);
    const two = await t.create(t.lead);
    await t.update(t.lead, two, { action: "delete" });
    await t.update(t.lead, one, { action: "delete" });
    expect((await t.create(t.lead)).id).toBe("task-3");
    expect((await getTask(db, t.teamId, "task-2")).status).toBe("deleted");
  });
});

describe("updateTask: revisions", () => {
  it("rejects a stale expectedRevision with the current revision in message and details", async () => {
    const t = await newTeam();
    const v1 = await t.create(t.alice);
    const v2 = await t.update(t.alice, v1, { action: "claim" });
    const err = await expectCode(t.update(t.alice, v1, { action: "complete" }), "TEAM_TASK_STALE_REVISION");
    expect(err.message).toContain("revision 2");
    expect(err.details).toMatchObject({ taskId: "task-1", currentRevision: 2, expectedRevision: 1 });
    expect(await getTask(db, t.teamId, "task-1")).toEqual(v2);
  });

  it("bumps the revision by one and refreshes updatedAt on every change", async () => {
    const t = await newTeam();
    const v1 = await t.create(t.alice);
    await new Promise((r) => setTimeout(r, 5));
    const v2 = await t.update(t.lead, v1, { action: "edit", subject: "renamed" });
    expect(v2.revision).toBe(2);
    expect(v2.updatedAt.getTime()).toBeGreaterThan(v1.updatedAt.getTime());
    expect(v2.createdAt).toEqual(v1.createdAt);
  });

  it("gives contiguous revisions 1..21 over 20 sequential updates", async () => {
    const t = await newTeam();
    let task = await t.create(t.alice);
    const revisions = [task.revision];
    for (let i = 0; i < 20; i++) {
      task = await t.update(t.alice, task, i % 2 === 0 ? { action: "claim" } : { action: "release" });
      revisions.push(task.revision);
    }
    expect(revisions).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    expect((await getTask(db, t.teamId, task.id)).revision).toBe(21);
  });

  it("lets exactly one of 10 concurrent completes with the same revision win", async () => {
    const t = await newTeam();
    const start = await t.update(t.alice, await t.create(t.alice), { action: "claim" });
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => t.update(i % 2 ? t.alice : t.lead, start, { action: "complete" })),
    );
    const won = results.filter((r) => r.status === "fulfilled");
    const lost = results.filter((r) => r.status === "rejected");
    expect(won).toHaveLength(1);
    expect(lost.map((r) => (r.reason as AppError).code)).toEqual(Array(9).fill("TEAM_TASK_STALE_REVISION"));
    const final = await getTask(db, t.teamId, start.id);
    expect(final).toMatchObject({ status: "completed", revision: start.revision + 1 });
  });

  it("lets exactly one of 10 concurrent edits with the same revision win", async () => {
    const t = await newTeam();
    const start = await t.create(t.lead);
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => t.update(t.lead, start, { action: "edit", subject: `edit ${i}` })),
    );
    const won = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    expect(won).toHaveLength(1);
    for (const r of results) {
      if (r.status === "rejected") expect((r.reason as AppError).code).toBe("TEAM_TASK_STALE_REVISION");
    }
    const final = await getTask(db, t.teamId, start.id);
    expect(final).toMatchObject({ revision: 2, subject: won[0]!.subject });
  });

  it("gives concurrent creates distinct contiguous ids and never exceeds the limit", async () => {
    const t = await newTeam();
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => t.create(t.alice, {}, 6)));
    const ids = results.flatMap((r) => (r.status === "fulfilled" ? [r.value.id] : []));
    expect(ids.sort((a, b) => a.localeCompare(b, "en", { numeric: true }))).toEqual(
      ["task-1", "task-2", "task-3", "task-4", "task-5", "task-6"],
    );
    for (const r of results) {
      if (r.status === "rejected") expect((r.reason as AppError).code).toBe("TEAM_TASK_LIMIT");
    }
  });

  it("checks deleted before revision, and fails for unknown tasks", async () => {
    const t = await newTeam();
    const task = await t.create(t.lead);
    const gone = await t.update(t.lead, task, { action: "delete" });
    await expectCode(t.update(t.lead, task, { action: "claim" }), "TEAM_TASK_DELETED");
    for (const action of ["claim", "release", "edit", "complete", "reopen", "reassign", "delete"] as const) {
      const input = action === "edit" ? { action, subject: "x" } : { action };
      await expectCode(t.update(t.lead, gone, input), "TEAM_TASK_DELETED");
    }
    await expectCode(t.update(t.lead, gone, { action: "set_dependencies", blockedBy: [] }), "TEAM_TASK_DELETED");
    await expectCode(
      updateTask(db, t.lead, { taskId: "task-9", expectedRevision: 1, action: "claim" }),
      "TEAM_TASK_NOT_FOUND",
    );
    await expectCode(
      updateTask(db, t.lead, { taskId: "task-1", expectedRevision: 0, action: "claim" }),
      "TEAM_INVALID_ARGUMENT",
    );
    await expectCode(
      updateTask(db, t.lead, { taskId: "task-1", expectedRevision: 1, action: "frobnicate" } as unknown as UpdateTaskInput),
      "TEAM_INVALID_ARGUMENT",
    );
  });

  it("rejects fields that do not belong to the action", async () => {
    const t = await newTeam();
    const task = await t.create(t.alice);
    await expectCode(t.update(t.alice, task, { action: "claim", subject: "x" }), "TEAM_INVALID_ARGUMENT");
    await expectCode(t.update(t.lead, task, { action: "edit", owner: "bob" }), "TEAM_INVALID_ARGUMENT");
    await expectCode(t.update(t.lead, task, { action: "reassign", blockedBy: [] }), "TEAM_INVALID_ARGUMENT");
    expect((await getTask(db, t.teamId, task.id)).revision).toBe(1);
  });
});

describe("updateTask: claim", () => {
  it("makes a ready pending task in_progress owned by the caller", async () => {
    const t = await newTeam();
    const claimed = await t.update(t.alice, await t.create(t.bob), { action: "claim" });
    expect(claimed).toMatchObject({
      status: "in_progress",
      owner: t.alice.sessionId,
      ownerName: "alice",
      revision: 2,
      ready: false,
    });
    const byLead = await t.update(t.lead, await t.create(t.bob), { action: "claim" });
    expect(byLead).toMatchObject({ status: "in_progress", owner: t.teamId, ownerName: "lead" });
  });

  it("fails for a task someone else owns, one the caller already works on, or a completed one", async () => {
    const t = await newTeam();
    const claimed = await t.update(t.alice, await t.create(t.alice), { action: "claim" });
    const err = await expectCode(t.update(t.bob, claimed, { action: "claim" }), "TEAM_TASK_ALREADY_CLAIMED");
    expect(err.message).toContain("alice");
    await expectCode(t.update(t.lead, claimed, { action: "claim" }), "TEAM_TASK_ALREADY_CLAIMED");
    await expectCode(t.update(t.alice, claimed, { action: "claim" }), "TEAM_TASK_INVALID_TRANSITION");
    const done = await t.update(t.alice, claimed, { action: "complete" });
    await expectCode(t.update(t.alice, done, { action: "claim" }), "TEAM_TASK_INVALID_TRANSITION");
  });

  it("fails while a blocker is not completed, and succeeds once it is", async () => {
    const t = await newTeam();
    const first = await t.create(t.alice);
    const second = await t.create(t.bob, { blockedBy: [first.id] });
    const err = await expectCode(t.update(t.bob, second, { action: "claim" }), "TEAM_TASK_BLOCKED");
    expect(err.details).toMatchObject({ waitingFor: ["task-1"] });
    const working = await t.update(t.alice, first, { action: "claim" });
    await expectCode(t.update(t.bob, second, { action: "claim" }), "TEAM_TASK_BLOCKED");
    await t.update(t.alice, working, { action: "complete" });
    const claimed = await t.update(t.bob, await getTask(db, t.teamId, second.id), { action: "claim" });
    expect(claimed).toMatchObject({ status: "in_progress", ownerName: "bob" });
  });
});

describe("updateTask: release", () => {
  it("returns an in-progress task to pending with no owner (owner or lead)", async () => {
    const t = await newTeam();
    const claimed = await t.update(t.alice, await t.create(t.alice), { action: "claim" });
    const released = await t.update(t.alice, claimed, { action: "release" });
    expect(released).toMatchObject({ status: "pending", owner: null, ownerName: null, ready: true, revision: 3 });
    const again = await t.update(t.bob, released, { action: "claim" });
    expect(await t.update(t.lead, again, { action: "release" })).toMatchObject({ status: "pending", owner: null });
  });

  it("is refused to other members and to tasks not in progress", async () => {
    const t = await newTeam();
    const claimed = await t.update(t.alice, await t.create(t.alice), { action: "claim" });
    await expectCode(t.update(t.bob, claimed, { action: "release" }), "TEAM_TASK_UNAUTHORIZED");
    const pending = await t.create(t.alice);
    await expectCode(t.update(t.lead, pending, { action: "release" }), "TEAM_TASK_INVALID_TRANSITION");
  });
});

describe("updateTask: edit", () => {
  it("replaces the given fields (owner or lead)", async () => {
    const t = await newTeam();
    const claimed = await t.update(t.alice, await t.create(t.alice, { description: "old", writeScopes: ["a"] }), {
      action: "claim",
    });
    const edited = await t.update(t.alice, claimed, { action: "edit", subject: " New subject " });
    expect(edited).toMatchObject({ subject: "New subject", description: "old", writeScopes: ["a"], status: "in_progress" });
    const byLead = await t.update(t.lead, edited, { action: "edit", description: "new", writeScopes: ["./b/"] });
    expect(byLead).toMatchObject({ subject: "New subject", description: "new", writeScopes: ["b"], revision: 4 });
    expect(await t.update(t.lead, byLead, { action: "edit", writeScopes: [] })).toMatchObject({ writeScopes: [] });
  });

  it("is refused to non-owners (the creator too) and validates its fields", async () => {
    const t = await newTeam();
    const unowned = await t.create(t.alice);
    await expectCode(t.update(t.alice, unowned, { action: "edit", subject: "mine?" }), "TEAM_TASK_UNAUTHORIZED");
    const claimed = await t.update(t.alice, unowned, { action: "claim" });
    await expectCode(t.update(t.bob, claimed, { action: "edit", subject: "x" }), "TEAM_TASK_UNAUTHORIZED");
    await expectCode(t.update(t.alice, claimed, { action: "edit" }), "TEAM_INVALID_ARGUMENT");
    await expectCode(t.update(t.alice, claimed, { action: "edit", subject: "" }), "TEAM_INVALID_ARGUMENT");
    await expectCode(t.update(t.alice, claimed, { action: "edit", subject: "s".repeat(201) }), "TEAM_INVALID_ARGUMENT");
    await expectCode(
      t.update(t.alice, claimed, { action: "edit", description: "d".repeat(LIMITS.taskDescriptionBytes + 1) }),
      "TEAM_INVALID_ARGUMENT",
    );
    await expectCode(t.update(t.alice, claimed, { action: "edit", writeScopes: ["../x"] }), "TEAM_INVALID_WRITE_SCOPE");
    expect((await getTask(db, t.teamId, claimed.id)).revision).toBe(claimed.revision);
  });
});

describe("updateTask: set_dependencies", () => {
  it("replaces the edges (owner or lead); [] clears them", async () => {
    const t = await newTeam();
    const [a, b, c] = [await t.create(t.lead), await t.create(t.lead), await t.create(t.lead)];
    const withDeps = await t.update(t.lead, c!, { action: "set_dependencies", blockedBy: [a!.id, b!.id] });
    expect(withDeps).toMatchObject({ blockedBy: ["task-1", "task-2"], ready: false, revision: 2 });
    const replaced = await t.update(t.lead, withDeps, { action: "set_dependencies", blockedBy: [b!.id] });
    expect(replaced.blockedBy).toEqual(["task-2"]);
    const cleared = await t.update(t.lead, replaced, { action: "set_dependencies", blockedBy: [] });
    expect(cleared).toMatchObject({ blockedBy: [], ready: true });

    const owned = await t.update(t.bob, cleared, { action: "claim" });
    expect(await t.update(t.bob, owned, { action: "set_dependencies", blockedBy: [a!.id] })).toMatchObject({
      blockedBy: ["task-1"],
    });
  });

  it("rejects cycles, including self-dependency", async () => {
    const t = await newTeam();
    const a = await t.create(t.lead);
    const b = await t.create(t.lead, { blockedBy: [a.id] });
    const c = await t.create(t.lead, { blockedBy: [b.id] });
    const twoCycle = await expectCode(
      t.update(t.lead, a, { action: "set_dependencies", blockedBy: [b.id] }),
      "TEAM_TASK_DEPENDENCY_CYCLE",
    );
    expect(twoCycle.details).toMatchObject({ cycle: ["task-1", "task-2", "task-1"] });
    const threeCycle = await expectCode(
      t.update(t.lead, a, { action: "set_dependencies", blockedBy: [c.id] }),
      "TEAM_TASK_DEPENDENCY_CYCLE",
    );
    expect(threeCycle.details).toMatchObject({ cycle: ["task-1", "task-3", "task-2", "task-1"] });
    expect(threeCycle.message).toContain("task-1 → task-3 → task-2 → task-1");
    const self = await expectCode(
      t.update(t.lead, a, { action: "set_dependencies", blockedBy: [a.id] }),
      "TEAM_TASK_DEPENDENCY_CYCLE",
    );
    expect(self.details).toMatchObject({ cycle: ["task-1", "task-1"] });
    // A diamond is fine: c → b → a and c → a.
    expect(await t.update(t.lead, c, { action: "set_dependencies", blockedBy: [b.id, a.id] })).toMatchObject({
      blockedBy: ["task-2", "task-1"],
    });
    expect((await getTask(db, t.teamId, a.id)).blockedBy).toEqual([]);
  });

  it("validates the list and the caller", async () => {
    const t = await newTeam();
    const a = await t.create(t.lead);
    const gone = await t.update(t.lead, await t.create(t.lead), { action: "delete" });
    await expectCode(t.update(t.lead, a, { action: "set_dependencies", blockedBy: ["task-50"] }), "TEAM_TASK_NOT_FOUND");
    await expectCode(t.update(t.lead, a, { action: "set_dependencies", blockedBy: [gone.id] }), "TEAM_TASK_DELETED");
    const b = await t.create(t.lead);
    await expectCode(
      t.update(t.lead, a, { action: "set_dependencies", blockedBy: [b.id, b.id] }),
      "TEAM_INVALID_ARGUMENT",
    );
    await expectCode(t.update(t.lead, a, { action: "set_dependencies" }), "TEAM_INVALID_ARGUMENT");
    await expectCode(t.update(t.alice, a, { action: "set_dependencies", blockedBy: [b.id] }), "TEAM_TASK_UNAUTHORIZED");
  });
});

describe("updateTask: complete and reopen", () => {
  it("completes an in-progress task (owner or lead) and keeps its owner", async () => {
    const t = await newTeam();
    const claimed = await t.update(t.alice, await t.create(t.alice), { action: "claim" });
    const done = await t.update(t.alice, claimed, { action: "complete" });
    expect(done).toMatchObject({ status: "completed", ownerName: "alice", ready: false, revision: 3 });
    const other = await t.update(t.bob, await t.create(t.alice), { action: "claim" });
    expect(await t.update(t.lead, other, { action: "complete" })).toMatchObject({ status: "completed", ownerName: "bob" });
  });

  it("refuses other members and tasks not in progress", async () => {
    const t = await newTeam();
    const pending = await t.create(t.alice);
    await expectCode(t.update(t.lead, pending, { action: "complete" }), "TEAM_TASK_INVALID_TRANSITION");
    const claimed = await t.update(t.alice, pending, { action: "claim" });
    await expectCode(t.update(t.bob, claimed, { action: "complete" }), "TEAM_TASK_UNAUTHORIZED");
    const done = await t.update(t.alice, claimed, { action: "complete" });
    await expectCode(t.update(t.alice, done, { action: "complete" }), "TEAM_TASK_INVALID_TRANSITION");
  });

  it("reopens a completed task to pending with no owner (owner or lead)", async () => {
    const t = await newTeam();
    const done = await t.update(t.alice, await t.update(t.alice, await t.create(t.alice), { action: "claim" }), {
      action: "complete",
    });
    await expectCode(t.update(t.bob, done, { action: "reopen" }), "TEAM_TASK_UNAUTHORIZED");
    const reopened = await t.update(t.alice, done, { action: "reopen" });
    expect(reopened).toMatchObject({ status: "pending", owner: null, ownerName: null, ready: true, revision: 4 });
    await expectCode(t.update(t.lead, reopened, { action: "reopen" }), "TEAM_TASK_INVALID_TRANSITION");

    const again = await t.update(t.bob, await t.update(t.bob, reopened, { action: "claim" }), { action: "complete" });
    expect(await t.update(t.lead, again, { action: "reopen" })).toMatchObject({ status: "pending", owner: null });
  });
});

describe("updateTask: reassign", () => {
  it("gives a ready task to an active member or the lead (lead only)", async () => {
    const t = await newTeam();
    const task = await t.create(t.alice);
    const toAlice = await t.update(t.lead, task, { action: "reassign", owner: "alice" });
    expect(toAlice).toMatchObject({ status: "in_progress", owner: t.alice.sessionId, ownerName: "alice" });
    const toBob = await t.update(t.lead, toAlice, { action: "reassign", owner: " bob " });
    expect(toBob).toMatchObject({ status: "in_progress", ownerName: "bob", revision: 3 });
    const toLead = await t.update(t.lead, toBob, { action: "reassign", owner: "lead" });
    expect(toLead).toMatchObject({ status: "in_progress", owner: t.teamId, ownerName: "lead" });
  });

  it("unassigns on a blank owner", async () => {
    const t = await newTeam();
    for (const blank of ["", "   ", null, undefined]) {
      const claimed = await t.update(t.alice, await t.create(t.alice), { action: "claim" });
      const input = blank === undefined ? { action: "reassign" as const } : { action: "reassign" as const, owner: blank };
      expect(await t.update(t.lead, claimed, input)).toMatchObject({ status: "pending", owner: null, ownerName: null });
    }
  });

  it("is the lead's alone", async () => {
    const t = await newTeam();
    const claimed = await t.update(t.alice, await t.create(t.alice), { action: "claim" });
    await expectCode(t.update(t.alice, claimed, { action: "reassign", owner: "bob" }), "TEAM_TASK_UNAUTHORIZED");
    await expectCode(t.update(t.bob, claimed, { action: "reassign", owner: "bob" }), "TEAM_TASK_UNAUTHORIZED");
  });

  it("needs a ready task, an open status and an active target", async () => {
    const t = await newTeam();
    const first = await t.create(t.lead);
    const blocked = await t.create(t.lead, { blockedBy: [first.id] });
    await expectCode(t.update(t.lead, blocked, { action: "reassign", owner: "alice" }), "TEAM_TASK_BLOCKED");
    // Unassigning needs no readiness.
    const unassigned = await t.update(t.lead, blocked, { action: "reassign", owner: "" });
    expect(unassigned).toMatchObject({ status: "pending", owner: null, revision: 2 });

    await expectCode(t.update(t.lead, first, { action: "reassign", owner: "nobody" }), "TEAM_MEMBER_NOT_FOUND");
    await addMember(t.teamId, "carol", "provisioning");
    await addMember(t.teamId, "dave", "failed");
    await expectCode(t.update(t.lead, first, { action: "reassign", owner: "carol" }), "TEAM_INVALID_TARGET");
    await expectCode(t.update(t.lead, first, { action: "reassign", owner: "dave" }), "TEAM_INVALID_TARGET");

    const done = await t.update(t.lead, await t.update(t.lead, first, { action: "claim" }), { action: "complete" });
    await expectCode(t.update(t.lead, done, { action: "reassign", owner: "alice" }), "TEAM_TASK_INVALID_TRANSITION");
  });
});

describe("updateTask: delete", () => {
  it("keeps a tombstone (owner or lead)", async () => {
    const t = await newTeam();
    const claimed = await t.update(t.alice, await t.create(t.alice), { action: "claim" });
    const gone = await t.update(t.alice, claimed, { action: "delete" });
    expect(gone).toMatchObject({ status: "deleted", revision: 3, ready: false, warnings: [] });
    expect(await getTask(db, t.teamId, gone.id)).toEqual(gone);
    const byLead = await t.update(t.lead, await t.create(t.bob), { action: "delete" });
    expect(byLead.status).toBe("deleted");
  });

  it("is refused to non-owners, the creator included", async () => {
    const t = await newTeam();
    const unowned = await t.create(t.alice);
    await expectCode(t.update(t.alice, unowned, { action: "delete" }), "TEAM_TASK_UNAUTHORIZED");
    const claimed = await t.update(t.bob, unowned, { action: "claim" });
    await expectCode(t.update(t.alice, claimed, { action: "delete" }), "TEAM_TASK_UNAUTHORIZED");
  });

  it("is refused while a live task (even a completed one) lists it as a blocker", async () => {
    const t = await newTeam();
    const base = await t.create(t.lead);
    const dep = await t.create(t.lead, { blockedBy: [base.id] });
    const err = await expectCode(t.update(t.lead, base, { action: "delete" }), "TEAM_TASK_HAS_DEPENDENTS");
    expect(err.details).toMatchObject({ dependents: ["task-2"] });

    const baseDone = await t.update(t.lead, await t.update(t.lead, base, { action: "claim" }), { action: "complete" });
    const depDone = await t.update(t.lead, await t.update(t.lead, dep, { action: "claim" }), { action: "complete" });
    await expectCode(t.update(t.lead, baseDone, { action: "delete" }), "TEAM_TASK_HAS_DEPENDENTS");

    await t.update(t.lead, depDone, { action: "delete" });
    expect(await t.update(t.lead, baseDone, { action: "delete" })).toMatchObject({ status: "deleted" });
  });
});

describe("readiness", () => {
  it("is pending with every blocker completed", async () => {
    const t = await newTeam();
    const a = await t.create(t.lead);
    const b = await t.create(t.lead);
    const c = await t.create(t.lead, { blockedBy: [a.id, b.id] });
    expect(c.ready).toBe(false);
    const aDone = await t.update(t.lead, await t.update(t.lead, a, { action: "claim" }), { action: "complete" });
    expect((await getTask(db, t.teamId, c.id)).ready).toBe(false);
    await t.update(t.lead, await t.update(t.lead, b, { action: "claim" }), { action: "complete" });
    expect((await getTask(db, t.teamId, c.id)).ready).toBe(true);
    // Readiness never starts an owner.
    expect((await getTask(db, t.teamId, c.id)).status).toBe("pending");
    await t.update(t.lead, aDone, { action: "reopen" });
    expect((await getTask(db, t.teamId, c.id)).ready).toBe(false);
  });
});

describe("write-scope warnings", () => {
  it("warn about overlaps with other in-progress tasks only", async () => {
    const t = await newTeam();
    const app = await t.update(t.alice, await t.create(t.alice, { writeScopes: ["src"] }), { action: "claim" });
    const lib = await t.create(t.bob, { writeScopes: ["./src/lib/", "docs"] });
    const srcs = await t.create(t.bob, { writeScopes: ["srcs"] });
    expect(lib.warnings).toEqual([{ code: "WRITE_SCOPE_OVERLAP", taskId: "task-1", scope: "src/lib", otherScope: "src" }]);
    expect(srcs.warnings).toEqual([]);
    // Pending tasks do not cause warnings on others, and a task never warns about itself.
    expect((await getTask(db, t.teamId, app.id)).warnings).toEqual([]);

    const libClaimed = await t.update(t.bob, lib, { action: "claim" });
    expect(libClaimed.warnings).toHaveLength(1);
    expect((await getTask(db, t.teamId, app.id)).warnings).toEqual([
      { code: "WRITE_SCOPE_OVERLAP", taskId: "task-2", scope: "src", otherScope: "src/lib" },
    ]);
    // Advisory only: overlapping claims are allowed. Completing one clears the warning.
    await t.update(t.alice, await getTask(db, t.teamId, app.id), { action: "complete" });
    expect((await getTask(db, t.teamId, lib.id)).warnings).toEqual([]);
    expect((await getTask(db, t.teamId, app.id)).warnings).toEqual([]);
  });
});

describe("listTasks", () => {
  it("filters by status, owner and readiness, in id order, hiding deleted tasks by default", async () => {
    const t = await newTeam();
    const a = await t.create(t.lead);
    const b = await t.create(t.lead, { blockedBy: [a.id] });
    const c = await t.update(t.alice, await t.create(t.lead), { action: "claim" });
    const d = await t.update(t.lead, await t.create(t.lead), { action: "claim" });
    const e = await t.update(t.lead, await t.create(t.lead), { action: "delete" });
    const ids = (p: { tasks: TaskView[] }) => p.tasks.map((x) => x.id);

    expect(ids(await listTasks(db, t.teamId))).toEqual([a.id, b.id, c.id, d.id]);
    expect(ids(await listTasks(db, t.teamId, { status: "deleted" }))).toEqual([e.id]);
    expect(ids(await listTasks(db, t.teamId, { status: "in_progress" }))).toEqual([c.id, d.id]);
    expect(ids(await listTasks(db, t.teamId, { status: "completed" }))).toEqual([]);
    expect(ids(await listTasks(db, t.teamId, { owner: "alice" }))).toEqual([c.id]);
    expect(ids(await listTasks(db, t.teamId, { owner: "lead" }))).toEqual([d.id]);
    expect(ids(await listTasks(db, t.teamId, { owner: "unowned" }))).toEqual([a.id, b.id]);
    expect(ids(await listTasks(db, t.teamId, { owner: "bob" }))).toEqual([]);
    await expectCode(listTasks(db, t.teamId, { owner: "zed" }), "TEAM_MEMBER_NOT_FOUND");
    expect(ids(await listTasks(db, t.teamId, { ready: true }))).toEqual([a.id]);
    expect(ids(await listTasks(db, t.teamId, { ready: false }))).toEqual([b.id, c.id, d.id]);

    await t.update(t.lead, await t.update(t.lead, a, { action: "claim" }), { action: "complete" });
    expect(ids(await listTasks(db, t.teamId, { ready: true }))).toEqual([b.id]);
    expect(ids(await listTasks(db, t.teamId, { ready: true, owner: "unowned", status: "pending" }))).toEqual([b.id]);
  });

  it("pages with a cursor and validates limit and cursor", async () => {
    const t = await newTeam();
    for (let i = 0; i < 5; i++) await t.create(t.lead);
    await t.update(t.lead, await getTask(db, t.teamId, "task-3"), { action: "delete" });

    const p1 = await listTasks(db, t.teamId, { limit: 2 });
    expect(p1.tasks.map((x) => x.id)).toEqual(["task-1", "task-2"]);
    expect(p1.nextCursor).toBe("task-2");
    const p2 = await listTasks(db, t.teamId, { limit: 2, cursor: p1.nextCursor });
    expect(p2.tasks.map((x) => x.id)).toEqual(["task-4", "task-5"]);
    expect(p2.nextCursor).toBeUndefined();
    const all = await listTasks(db, t.teamId);
    expect(all.tasks).toHaveLength(4);
    expect(all).not.toHaveProperty("nextCursor");
    expect(await listTasks(db, t.teamId, { limit: 4 })).not.toHaveProperty("nextCursor");

    await expectCode(listTasks(db, t.teamId, { limit: 0 }), "TEAM_INVALID_ARGUMENT");
    await expectCode(listTasks(db, t.teamId, { limit: 101 }), "TEAM_INVALID_ARGUMENT");
    await expectCode(listTasks(db, t.teamId, { limit: 1.5 }), "TEAM_INVALID_ARGUMENT");
    await expectCode(listTasks(db, t.teamId, { cursor: "nope" }), "TEAM_INVALID_ARGUMENT");
    expect((await listTasks(db, t.teamId, { limit: 100 })).tasks).toHaveLength(4);
  });

  it("returns the same views as getTask", async () => {
    const t = await newTeam();
    await t.update(t.alice, await t.create(t.alice, { writeScopes: ["src"] }), { action: "claim" });
    await t.create(t.bob, { writeScopes: ["src/x"], blockedBy: ["task-1"] });
    const page = await listTasks(db, t.teamId);
    expect(page.tasks).toEqual([await getTask(db, t.teamId, "task-1"), await getTask(db, t.teamId, "task-2")]);
  });
});

describe("live activity", () => {
  it("notifies the team id on every committed change, as a board change", async () => {
    const t = await newTeam();
    const hub = new ActivityHub(tdb);
    await hub.start();
    const seen: Activity[] = [];
    const off = hub.on(t.teamId, (a) => seen.push(a));
    try {
      const task = await t.create(t.alice);
      await t.update(t.alice, task, { action: "claim" });
      await expectCode(t.update(t.alice, task, { action: "claim" }), "TEAM_TASK_STALE_REVISION");
      // A marker after the refusal: notifications arrive in commit order, so once the marker
      // is here, one from the refused update would have been seen before it.
      await notifyActivity(db, t.teamId, "event");
      await expect.poll(() => seen.length, { timeout: 5_000, interval: 20 }).toBeGreaterThanOrEqual(3);
      expect(seen).toEqual([
        { sessionId: t.teamId, kind: "board" },
        { sessionId: t.teamId, kind: "board" },
        { sessionId: t.teamId, kind: "event" },
      ]);
    } finally {
      off();
      await hub.close();
    }
  });
});
