import { TRPCError } from "@trpc/server";
import { describe, expect } from "vitest";
import { ZodError } from "zod";
import { createDb, inTx, type Db } from "../db/client";
import { parseEnv } from "../env";
import { AppError, type AppErrorCode } from "../errors";
import { asSessionId, asUserId, type SessionId } from "../ids";
import { ActivityHub } from "../live/activity";
import { notifyActivity } from "../db/notify";
import type { Runtime } from "../runtime/runtime";
import { leadOf } from "../members/membership";
import { createTask, updateTask } from "../team/task-board";
import { tableDigests } from "../testing/db-snapshot";
import { databaseTest } from "../testing/fixtures";
import { lockWaiters } from "../testing/locks";
import { createTestPerson } from "../testing/people";
import { inertRuntime, newTestSession } from "../testing/runtime-harness";
import type { TrpcContext } from "../trpc/init";
import { createCaller } from "../trpc/root";
import type { Person } from "./person";
import { LIMITS } from "../../shared/limits";
import { createApiToken } from "./api-tokens";
import { listPresence, updatePresence } from "../team/presence";
import { PRESENCE_TTL_MS } from "../../shared/presence-timing";
import type { TeamMessage } from "../trpc/routers/team";
import { authorize, listPeople, removePerson, roleIn, setRole } from "./team-people";
import { acceptInvite, createInvite, inviteInfo, claimInviteForSignUp, listInvites } from "./invites";
import { promptAs, stopAs } from "../team/person-actions";

// People in teams against the real Postgres: who owns a team, invite links (single use,
// expiring, revocable, raced), roles and the last-owner rule (raced too), presence, and the
// record of who did what. Nothing drives agents here (an inert runtime), so the tables only
// change by what a test does.

const it = databaseTest()
  .extend("hub", { scope: "file" }, async ({ tdb }, { onCleanup }) => {
    const h = new ActivityHub(tdb);
    await h.start();
    onCleanup(() => h.close());
    return h;
  })
  // A second client: racing calls each get their own connection (and transaction).
  .extend("db2", { scope: "file" }, async ({ tdb }, { onCleanup }) => {
    const d = createDb(tdb, 2);
    onCleanup(() => d.$disconnect());
    return d;
  });

let db: Db;
let db2: Db;
let hub: ActivityHub;
let runtime: Runtime;

it.beforeAll(async ({ db: d, db2: d2, hub: h }) => {
  db = d;
  db2 = d2;
  hub = h;
  runtime = await inertRuntime(db, hub);
});

const ctxOf = (person: Person | null, client: Db = db): TrpcContext => ({ db: client, env: parseEnv({}), hub, runtime, person });
const as = (person: Person, client: Db = db) => createCaller(ctxOf(person, client));

/** The AppError code a promise rejects with (through tRPC or straight from the domain). */
async function codeOf(p: Promise<unknown>): Promise<AppErrorCode | "OK"> {
  try {
    await p;
    return "OK";
  } catch (e) {
    const cause = e instanceof TRPCError ? e.cause : e;
    if (cause instanceof AppError) return cause.code;
    if (cause instanceof ZodError) return "INVALID_INPUT";
    throw e;
  }
}

let n = 0;
/** A fresh person with a unique display name. */
const person = (name: string) => createTestPerson(db, `${name} ${++n}`);

/** A team owned by `owner`, with the others added in the given roles. */
async function teamOf(owner: Person, others: [Person, "owner" | "member" | "viewer"][] = []): Promise<SessionId> {
  const lead = await newTestSession(db, "people team", owner);
  for (const [p, role] of others) await db.teamPerson.create({ data: { teamId: lead, userId: p.id, role } });
  return lead;
}

const actionsOf = (teamId: SessionId) => db.personAction.findMany({ where: { teamId }, orderBy: { id: "asc" } });

describe("owners", () => {
  it("whoever creates a team owns it, and whoever forks one owns the fork (alone)", async () => {
    const ana = await person("Ana");
    const bob = await person("Bob");
    const team = asSessionId((await as(ana).session.create({ title: "Ana's" })).id);
    expect(await listPeople(db, team)).toEqual([expect.objectContaining({ userId: ana.id, role: "owner", name: ana.name })]);
    expect((await as(ana).session.get({ sessionId: team })).session.createdBy).toEqual({ id: ana.id, name: ana.name });

    await db.teamPerson.create({ data: { teamId: team, userId: bob.id, role: "member" } });
    const fork = asSessionId((await as(bob).session.fork({ sessionId: team, title: "Bob's fork" })).id);
    expect(await listPeople(db, fork)).toEqual([expect.objectContaining({ userId: bob.id, role: "owner" })]);
    expect(await roleIn(db, fork, ana.id)).toBeNull();
    expect((await as(bob).team.list()).map((t) => [t.id, t.myRole])).toEqual(expect.arrayContaining([[fork, "owner"], [team, "member"]]));
    // Recorded in both teams: who forked what, and who made the new one.
    expect((await actionsOf(team)).map((a) => [a.action, a.userName])).toEqual([
      ["team_created", ana.name],
      ["fork", bob.name],
    ]);
    expect((await actionsOf(fork)).map((a) => [a.action, a.userName, a.detail])).toEqual([["fork", bob.name, expect.objectContaining({ sourceId: team })]]);
  });
});

describe("invite links", () => {
  it("let one person join with the link's role, once", async () => {
    const ana = await person("Ana");
    const team = await teamOf(ana);
    const invite = await as(ana).people.invite({ teamId: team, role: "viewer" });
    // Only the hash is stored: the token is in the answer alone.
    const row = await db.teamInvite.findUniqueOrThrow({ where: { id: invite.id } });
    expect(row.tokenHash).not.toBe(invite.token);
    expect(JSON.stringify(row)).not.toContain(invite.token);
    expect(await inviteInfo(db, invite.token)).toMatchObject({ teamTitle: "people team", role: "viewer", invitedBy: ana.name, status: "valid" });

    const cleo = await person("Cleo");
    expect(await as(cleo).people.accept({ token: invite.token })).toEqual({ teamId: team, role: "viewer" });
    expect(await roleIn(db, team, cleo.id)).toBe("viewer");
    expect(await inviteInfo(db, invite.token)).toMatchObject({ status: "used" });
    expect(await claimInviteForSignUp(db, invite.token, "someone@example.test")).toBe(false);
    expect(await listInvites(db, team)).toEqual([]);

    const dan = await person("Dan");
    const before = await tableDigests(db);
    expect(await codeOf(as(dan).people.accept({ token: invite.token }))).toBe("INVITE_NOT_FOUND");
    expect(await codeOf(as(dan).people.accept({ token: "inv_not_a_real_one" }))).toBe("INVITE_NOT_FOUND");
    expect(await tableDigests(db)).toEqual(before);
    expect(await roleIn(db, team, dan.id)).toBeNull();
  });

  it("made by someone who stops being an owner are revoked with it (demoted or removed)", async () => {
    const ana = await person("Ana");
    const bo = await person("Bo");
    const team = await teamOf(ana, [[bo, "owner"]]);
    const [first, second] = [await createInvite(db, bo, team, { role: "member", expiresInHours: 1 }), await createInvite(db, ana, team, { role: "viewer", expiresInHours: 1 })];
    await setRole(db, ana, team, bo.id, "member");
    expect(await inviteInfo(db, first.token)).toMatchObject({ status: "revoked" });
    expect(await inviteInfo(db, second.token)).toMatchObject({ status: "valid" });
    // Bo cannot get back in (or promote himself) with his own old link.
    await removePerson(db, ana, team, bo.id);
    expect(await codeOf(acceptInvite(db, bo, first.token))).toBe("INVITE_NOT_FOUND");
    expect(await roleIn(db, team, bo.id)).toBeNull();
    const third = await createInvite(db, ana, team, { role: "member", expiresInHours: 1 });
    await db.teamPerson.create({ data: { teamId: team, userId: bo.id, role: "owner" } });
    const fourth = await createInvite(db, bo, team, { role: "member", expiresInHours: 1 });
    await removePerson(db, ana, team, bo.id);
    expect(await inviteInfo(db, fourth.token)).toMatchObject({ status: "revoked" });
    expect(await inviteInfo(db, third.token)).toMatchObject({ status: "valid" });
  });

  it("expire", async () => {
    const ana = await person("Ana");
    const team = await teamOf(ana);
    const invite = await createInvite(db, ana, team, { role: "member", expiresInHours: 1 });
    expect(await listInvites(db, team)).toHaveLength(1);
    await db.teamInvite.update({ where: { id: invite.id }, data: { expiresAt: new Date(Date.now() - 1_000) } });
    expect(await inviteInfo(db, invite.token)).toMatchObject({ status: "expired" });
    expect(await claimInviteForSignUp(db, invite.token, "someone@example.test")).toBe(false);
    expect(await listInvites(db, team)).toEqual([]);
    const eve = await person("Eve");
    const before = await tableDigests(db);
    expect(await codeOf(acceptInvite(db, eve, invite.token))).toBe("INVITE_NOT_FOUND");
    expect(await tableDigests(db)).toEqual(before);
  });

  it("are revocable while open, and a revoked link lets nobody in", async () => {
    const ana = await person("Ana");
    const team = await teamOf(ana);
    const other = await teamOf(ana);
    const invite = await as(ana).people.invite({ teamId: team, role: "member" });
    // Revoked through another team's id: not that team's invite.
    expect(await codeOf(as(ana).people.revokeInvite({ teamId: other, inviteId: invite.id }))).toBe("INVITE_NOT_FOUND");
    expect(await as(ana).people.revokeInvite({ teamId: team, inviteId: invite.id })).toEqual({ revoked: true });
    expect(await codeOf(as(ana).people.revokeInvite({ teamId: team, inviteId: invite.id }))).toBe("INVITE_NOT_FOUND");
    expect(await inviteInfo(db, invite.token)).toMatchObject({ status: "revoked" });
    const fay = await person("Fay");
    expect(await codeOf(as(fay).people.accept({ token: invite.token }))).toBe("INVITE_NOT_FOUND");
    expect(await roleIn(db, team, fay.id)).toBeNull();
    // A used link cannot be revoked (the person is in; remove them instead).
    const used = await createInvite(db, ana, team, { role: "viewer", expiresInHours: 1 });
    await acceptInvite(db, fay, used.token);
    expect(await codeOf(as(ana).people.revokeInvite({ teamId: team, inviteId: used.id }))).toBe("INVITE_NOT_FOUND");
    expect(await roleIn(db, team, fay.id)).toBe("viewer");
  });

  it("accepted by two people at once: exactly one joins", async () => {
    const ana = await person("Ana");
    const team = await teamOf(ana);
    for (let round = 0; round < 5; round++) {
      const invite = await createInvite(db, ana, team, { role: "member", expiresInHours: 1 });
      const [gil, hal] = [await person("Gil"), await person("Hal")];
      const outcomes = await Promise.all([codeOf(acceptInvite(db, gil, invite.token)), codeOf(acceptInvite(db2, hal, invite.token))]);
      expect(outcomes.sort()).toEqual(["INVITE_NOT_FOUND", "OK"]);
      const joined = await db.teamPerson.count({ where: { teamId: team, userId: { in: [gil.id, hal.id] } } });
      expect(joined).toBe(1);
      const row = await db.teamInvite.findUniqueOrThrow({ where: { id: invite.id }, include: { usedBy: true } });
      expect(row.uses).toBe(1);
      expect(row.usedBy).toHaveLength(1);
      expect([gil.id, hal.id]).toContain(row.usedBy[0]!.userId);
      expect(await roleIn(db, team, asUserId(row.usedBy[0]!.userId!))).toBe("member");
      expect(await db.personAction.count({ where: { teamId: team, action: "joined", detail: { path: ["inviteId"], equals: invite.id } } })).toBe(1);
    }
  });

  it("a reusable link lets in exactly as many people as it allows, however many race for it", async () => {
    const ana = await person("Ana");
    const team = await teamOf(ana);
    const invite = await createInvite(db, ana, team, { role: "viewer", expiresInHours: 1, maxUses: 20 });
    expect(await inviteInfo(db, invite.token)).toMatchObject({ status: "valid", usesLeft: 20 });
    const students = await Promise.all(Array.from({ length: 25 }, (_, i) => person(`Student ${i}`)));
    const outcomes = await Promise.all(students.map((p, i) => codeOf(acceptInvite(i % 2 ? db : db2, p, invite.token))));
    expect(outcomes.filter((o) => o === "OK")).toHaveLength(20);
    expect(outcomes.filter((o) => o === "INVITE_NOT_FOUND")).toHaveLength(5);
    expect(await db.teamPerson.count({ where: { teamId: team, role: "viewer" } })).toBe(20);
    expect(await db.teamInvite.findUniqueOrThrow({ where: { id: invite.id } })).toMatchObject({ uses: 20, maxUses: 20 });
    expect(await inviteInfo(db, invite.token)).toMatchObject({ status: "used", usesLeft: 0 });
    expect(await listInvites(db, team)).toEqual([]);
    // While it had uses left it was listed with its count.
    const another = await createInvite(db, ana, team, { role: "member", expiresInHours: 1, maxUses: 3 });
    await acceptInvite(db, await person("Una"), another.token);
    expect(await listInvites(db, team)).toEqual([expect.objectContaining({ id: another.id, uses: 1, maxUses: 3 })]);
  });

  it("accepted twice at once by the same person (two links): they join once, one link stays unused", async () => {
    const ana = await person("Ana");
    const team = await teamOf(ana);
    for (let round = 0; round < 3; round++) {
      const [one, two] = [await createInvite(db, ana, team, { role: "member", expiresInHours: 1 }), await createInvite(db, ana, team, { role: "viewer", expiresInHours: 1 })];
      const joe = await person("Joe");
      const outcomes = await Promise.all([acceptInvite(db, joe, one.token), acceptInvite(db2, joe, two.token)]);
      const role = await roleIn(db, team, joe.id);
      expect(role).not.toBeNull();
      // Both answers name the role Joe holds; exactly the link that made it is used.
      expect(outcomes.map((o) => o.role)).toEqual([role, role]);
      const used = await db.teamInviteUse.count({ where: { inviteId: { in: [one.id, two.id] }, userId: joe.id } });
      expect(used).toBe(1);
    }
  });

  it("never demote someone already in the team, and stay unused for someone else", async () => {
    const ana = await person("Ana");
    const ivy = await person("Ivy");
    const team = await teamOf(ana, [[ivy, "member"]]);
    const invite = await createInvite(db, ana, team, { role: "viewer", expiresInHours: 1 });
    expect(await acceptInvite(db, ana, invite.token)).toEqual({ teamId: team, role: "owner" });
    expect(await acceptInvite(db, ivy, invite.token)).toEqual({ teamId: team, role: "member" });
    expect(await roleIn(db, team, ana.id)).toBe("owner");
    expect(await roleIn(db, team, ivy.id)).toBe("member");
    expect(await inviteInfo(db, invite.token)).toMatchObject({ status: "valid" });
    const jo = await person("Jo");
    expect(await acceptInvite(db, jo, invite.token)).toEqual({ teamId: team, role: "viewer" });
  });

  it("are made and listed by owners only", async () => {
    const ana = await person("Ana");
    const kim = await person("Kim");
    const team = await teamOf(ana, [[kim, "member"]]);
    const before = await tableDigests(db);
    expect(await codeOf(as(kim).people.invite({ teamId: team, role: "viewer" }))).toBe("FORBIDDEN");
    expect(await codeOf(as(kim).people.invites({ teamId: team }))).toBe("FORBIDDEN");
    expect(await tableDigests(db)).toEqual(before);
    // An invite is never for an owner: ownership is given by setRole, by an owner.
    expect(await codeOf(as(ana).people.invite({ teamId: team, role: "owner" as "member" }))).toBe("INVALID_INPUT");
  });
});

describe("roles", () => {
  it("owners set roles and remove people; anyone leaves", async () => {
    const ana = await person("Ana");
    const [lou, max] = [await person("Lou"), await person("Max")];
    const team = await teamOf(ana, [
      [lou, "member"],
      [max, "viewer"],
    ]);
    expect(await as(ana).people.setRole({ teamId: team, userId: max.id, role: "member" })).toMatchObject({ userId: max.id, role: "member" });
    expect(await as(ana).people.setRole({ teamId: team, userId: lou.id, role: "owner" })).toMatchObject({ role: "owner" });
    // Lou, now an owner, manages people too.
    expect(await as(lou).people.setRole({ teamId: team, userId: max.id, role: "viewer" })).toMatchObject({ role: "viewer" });
    expect(await as(lou).people.remove({ teamId: team, userId: max.id })).toEqual({ removed: true });
    expect(await roleIn(db, team, max.id)).toBeNull();
    expect(await codeOf(as(ana).people.remove({ teamId: team, userId: max.id }))).toBe("PERSON_NOT_FOUND");
    expect(await codeOf(as(ana).people.setRole({ teamId: team, userId: max.id, role: "member" }))).toBe("PERSON_NOT_FOUND");
    expect(await as(lou).people.leave({ teamId: team })).toEqual({ left: true });
    expect((await listPeople(db, team)).map((p) => [p.userId, p.role])).toEqual([[ana.id, "owner"]]);
    expect((await actionsOf(team)).map((a) => [a.action, a.userName, a.detail])).toEqual([
      ["team_created", ana.name, {}],
      ["role_changed", ana.name, { userId: max.id, from: "viewer", to: "member" }],
      ["role_changed", ana.name, { userId: lou.id, from: "member", to: "owner" }],
      ["role_changed", lou.name, { userId: max.id, from: "member", to: "viewer" }],
      ["person_removed", lou.name, { userId: max.id }],
      ["left", lou.name, { userId: lou.id }],
    ]);
  });

  it("a member or viewer cannot manage people, and a removed person is not in the team any more", async () => {
    const ana = await person("Ana");
    const [ned, ola] = [await person("Ned"), await person("Ola")];
    const team = await teamOf(ana, [
      [ned, "member"],
      [ola, "viewer"],
    ]);
    const before = await tableDigests(db);
    expect(await codeOf(as(ned).people.setRole({ teamId: team, userId: ned.id, role: "owner" }))).toBe("FORBIDDEN");
    expect(await codeOf(as(ned).people.remove({ teamId: team, userId: ola.id }))).toBe("FORBIDDEN");
    expect(await codeOf(as(ola).people.setRole({ teamId: team, userId: ola.id, role: "member" }))).toBe("FORBIDDEN");
    expect(await tableDigests(db)).toEqual(before);
    await as(ana).people.remove({ teamId: team, userId: ned.id });
    expect(await codeOf(as(ned).team.roster({ teamId: team }))).toBe("TEAM_NOT_FOUND");
    expect(await codeOf(as(ned).people.leave({ teamId: team }))).toBe("TEAM_NOT_FOUND");
  });

  it("keep a last owner: they cannot leave, be removed or be demoted (LAST_OWNER), and nothing is persisted", async () => {
    const ana = await person("Ana");
    const pia = await person("Pia");
    const team = await teamOf(ana, [[pia, "member"]]);
    const before = await tableDigests(db);
    expect(await codeOf(as(ana).people.leave({ teamId: team }))).toBe("LAST_OWNER");
    expect(await codeOf(as(ana).people.remove({ teamId: team, userId: ana.id }))).toBe("LAST_OWNER");
    expect(await codeOf(as(ana).people.setRole({ teamId: team, userId: ana.id, role: "member" }))).toBe("LAST_OWNER");
    expect(await codeOf(as(ana).people.setRole({ teamId: team, userId: ana.id, role: "viewer" }))).toBe("LAST_OWNER");
    expect(await tableDigests(db)).toEqual(before);
    // Owner to owner is no demotion.
    expect(await as(ana).people.setRole({ teamId: team, userId: ana.id, role: "owner" })).toMatchObject({ role: "owner" });
    // With a second owner, the first may go.
    await as(ana).people.setRole({ teamId: team, userId: pia.id, role: "owner" });
    expect(await as(ana).people.leave({ teamId: team })).toEqual({ left: true });
    expect(await codeOf(as(pia).people.leave({ teamId: team }))).toBe("LAST_OWNER");
  });

  it("two owners demoting each other at once: the team lock serialises them, one owner remains", async () => {
    for (let round = 0; round < 5; round++) {
      const [qi, ray] = [await person("Qi"), await person("Ray")];
      const team = await teamOf(qi, [[ray, "owner"]]);
      // Both past any access check (both are owners): the lock alone decides.
      const outcomes = await Promise.all([codeOf(setRole(db, qi, team, ray.id, "member")), codeOf(setRole(db2, ray, team, qi.id, "member"))]);
      expect(outcomes.sort()).toEqual(["LAST_OWNER", "OK"]);
      expect(await db.teamPerson.count({ where: { teamId: team, role: "owner" } })).toBe(1);
      expect(await db.personAction.count({ where: { teamId: team, action: "role_changed" } })).toBe(1);
    }
    // Through the router: the later of the two may also meet the access check after the
    // earlier one committed (FORBIDDEN: no longer an owner); either way one owner remains.
    for (let round = 0; round < 5; round++) {
      const [qi, ray] = [await person("Qi"), await person("Ray")];
      const team = await teamOf(qi, [[ray, "owner"]]);
      const outcomes = await Promise.all([
        codeOf(as(qi, db).people.setRole({ teamId: team, userId: ray.id, role: "member" })),
        codeOf(as(ray, db2).people.setRole({ teamId: team, userId: qi.id, role: "member" })),
      ]);
      expect(outcomes.filter((o) => o === "OK")).toHaveLength(1);
      expect(outcomes.filter((o) => o !== "OK")[0]).toMatch(/^(LAST_OWNER|FORBIDDEN)$/);
      expect(await db.teamPerson.count({ where: { teamId: team, role: "owner" } })).toBe(1);
      expect(await db.personAction.count({ where: { teamId: team, action: "role_changed" } })).toBe(1);
    }
  });

  it("two owners leaving at once: one of them stays", async () => {
    for (let round = 0; round < 5; round++) {
      const [sol, tia] = [await person("Sol"), await person("Tia")];
      const team = await teamOf(sol, [[tia, "owner"]]);
      const outcomes = await Promise.all([removePerson(db, sol, team, sol.id), removePerson(db2, tia, team, tia.id)].map(codeOf));
      expect(outcomes.sort()).toEqual(["LAST_OWNER", "OK"]);
      expect(await db.teamPerson.count({ where: { teamId: team, role: "owner" } })).toBe(1);
    }
  });

  it("setRole through the domain keeps the rule too (the router is not the only guard)", async () => {
    const ana = await person("Ana");
    const team = await teamOf(ana);
    expect(await codeOf(setRole(db, ana, team, ana.id, "viewer"))).toBe("LAST_OWNER");
  });
});

describe("presence", () => {
  const AGENT_VIEW = { place: "agent", file: null, editing: null } as const;

  it("is one row per tab, updated in place; a viewer is never shown typing", async () => {
    const ana = await person("Ana");
    const uma = await person("Uma");
    const team = await teamOf(ana, [[uma, "viewer"]]);
    await as(ana).people.presence({ teamId: team, clientId: "tab-ana-1", watching: team, typingTo: null });
    await as(ana).people.presence({ teamId: team, clientId: "tab-ana-1", watching: team, typingTo: team });
    await as(ana).people.presence({ teamId: team, clientId: "tab-ana-2", watching: null, typingTo: null });
    await as(uma).people.presence({ teamId: team, clientId: "tab-uma-1", watching: team, typingTo: team });
    expect(await listPresence(db, team)).toEqual([
      { clientId: "tab-ana-1", userId: ana.id, name: ana.name, watching: team, typingTo: team, ...AGENT_VIEW },
      { clientId: "tab-ana-2", userId: ana.id, name: ana.name, watching: null, typingTo: null, ...AGENT_VIEW },
      { clientId: "tab-uma-1", userId: uma.id, name: uma.name, watching: team, typingTo: null, ...AGENT_VIEW },
    ]);
    expect(await db.presence.count({ where: { teamId: team } })).toBe(3);
  });

  it("says where a tab is (a view, a file, the board) and what it edits; a viewer is never shown editing", async () => {
    const ana = await person("Ana");
    const uma = await person("Uma");
    const team = await teamOf(ana, [[uma, "viewer"]]);
    const seen = async () => (await listPresence(db, team)).map(({ clientId, place, file, editing }) => ({ clientId, place, file, editing }));
    await as(ana).people.presence({ teamId: team, clientId: "tab-where-a1", watching: team, typingTo: null, place: "files", file: "src/a.md", editing: { kind: "file", path: "src/a.md" } });
    await as(ana).people.presence({ teamId: team, clientId: "tab-where-a2", watching: team, typingTo: null, place: "board", editing: { kind: "task", taskId: "task-3" } });
    await as(uma).people.presence({ teamId: team, clientId: "tab-where-u1", watching: null, typingTo: null, place: "timeline", editing: { kind: "task", taskId: "task-3" } });
    expect(await seen()).toEqual([
      { clientId: "tab-where-a1", place: "files", file: "src/a.md", editing: { kind: "file", path: "src/a.md" } },
      { clientId: "tab-where-a2", place: "board", file: null, editing: { kind: "task", taskId: "task-3" } },
      { clientId: "tab-where-u1", place: "timeline", file: null, editing: null },
    ]);
    // A change of place alone is news for the room; the same report again is not. (Notifications
    // arrive in commit order: once the last change's has come, a no-op's would have too.)
    const woken: string[] = [];
    const off = hub.on(team, (a) => woken.push(a.kind));
    try {
      // The reports above may still be on their way: a marker committed after them arrives after
      // their notifications, and counting starts there.
      await notifyActivity(db.sql, team, "actions");
      await expect.poll(() => woken.includes("actions")).toBe(true);
      woken.length = 0;
      const report = (place: "board" | "timeline") => as(ana).people.presence({ teamId: team, clientId: "tab-where-a2", watching: team, typingTo: null, place });
      await report("timeline");
      await report("timeline");
      await report("board");
      await expect.poll(() => woken.filter((k) => k === "people").length).toBeGreaterThanOrEqual(2);
      expect(woken.filter((k) => k === "people")).toHaveLength(2);
    } finally {
      off();
    }
    // Bad places and ids are refused with a typed error and change nothing.
    const before = await tableDigests(db);
    for (const bad of [
      { place: "kitchen" },
      { editing: { kind: "task", taskId: "lunch" } },
      { editing: { kind: "file", path: "" } },
      { file: "x".repeat(3000) },
    ]) {
      const input = { teamId: team, clientId: "tab-where-a3", watching: null, typingTo: null, ...bad } as Parameters<ReturnType<typeof as>["people"]["presence"]>[0];
      expect(await codeOf(as(ana).people.presence(input))).toBe("INVALID_INPUT");
    }
    expect(await tableDigests(db)).toEqual(before);
  });

  it("names only the team's own sessions as watched or typed to", async () => {
    const ana = await person("Ana");
    const team = await teamOf(ana);
    const elsewhere = await teamOf(await person("Else"));
    const before = await tableDigests(db);
    for (const [watching, typingTo] of [
      [elsewhere, null],
      [team, elsewhere],
      [asSessionId("ses_no_such_session"), null],
    ] as const) {
      expect(await codeOf(as(ana).people.presence({ teamId: team, clientId: "tab-ana-elsewhere", watching, typingTo }))).toBe("SESSION_NOT_FOUND");
    }
    expect(await tableDigests(db)).toEqual(before);
  });

  it("drops a tab whose heartbeat stopped once its row is older than the TTL", async () => {
    const ana = await person("Ana");
    const team = await teamOf(ana);
    await updatePresence(db, team, ana.id, { clientId: "tab-stale-1", watching: team, typingTo: null, ...AGENT_VIEW });
    await updatePresence(db, team, ana.id, { clientId: "tab-fresh-1", watching: team, typingTo: null, ...AGENT_VIEW });
    await db.presence.update({ where: { clientId: "tab-stale-1" }, data: { lastSeen: new Date(Date.now() - PRESENCE_TTL_MS - 1_000) } });
    expect((await listPresence(db, team)).map((p) => p.clientId)).toEqual(["tab-fresh-1"]);
    // A heartbeat brings it back.
    await updatePresence(db, team, ana.id, { clientId: "tab-stale-1", watching: team, typingTo: null, ...AGENT_VIEW });
    expect((await listPresence(db, team)).map((p) => p.clientId)).toEqual(["tab-fresh-1", "tab-stale-1"]);
  });

  it("keeps a client id with the person and team that made it", async () => {
    const ana = await person("Ana");
    const vic = await person("Vic");
    const team = await teamOf(ana, [[vic, "member"]]);
    const vicsTeam = await teamOf(vic);
    await as(ana).people.presence({ teamId: team, clientId: "tab-ana-only", watching: team, typingTo: null });
    const row = await db.presence.findUniqueOrThrow({ where: { clientId: "tab-ana-only" } });
    // Another person, in the same team or another, cannot take it over or move it.
    await as(vic).people.presence({ teamId: team, clientId: "tab-ana-only", watching: null, typingTo: team });
    await as(vic).people.presence({ teamId: vicsTeam, clientId: "tab-ana-only", watching: null, typingTo: null });
    expect(await codeOf(as(ana).people.presence({ teamId: vicsTeam, clientId: "tab-ana-only", watching: null, typingTo: null }))).toBe("TEAM_NOT_FOUND");
    expect(await db.presence.findUniqueOrThrow({ where: { clientId: "tab-ana-only" } })).toEqual(row);
    expect(await listPresence(db, vicsTeam)).toEqual([]);
  });

  it("cannot be ended by another person's feed naming the same client id", async () => {
    const ana = await person("Ana");
    const xan = await person("Xan");
    const team = await teamOf(ana, [[xan, "member"]]);
    await as(ana).people.presence({ teamId: team, clientId: "tab-ana-evict", watching: team, typingTo: null });
    // Client ids are on every teammate's screen (the presence list): Xan opens and closes a
    // team feed with Ana's, as a tab of his own would.
    const abort = new AbortController();
    const xans = createCaller(ctxOf(xan), { signal: abort.signal });
    const feed = (await xans.team.live({ teamId: team, lastEventId: null, clientId: "tab-ana-evict" }))[Symbol.asyncIterator]();
    expect((await feed.next()).done).toBe(false);
    await feed.return?.();
    abort.abort();
    expect((await listPresence(db, team)).map((p) => [p.clientId, p.userId])).toEqual([["tab-ana-evict", ana.id]]);
  });

  it("leaves when the tab's team feed closes, and with a removed person", async () => {
    const ana = await person("Ana");
    const wes = await person("Wes");
    const team = await teamOf(ana, [[wes, "member"]]);
    const abort = new AbortController();
    const live = createCaller(ctxOf(ana), { signal: abort.signal });
    await as(ana).people.presence({ teamId: team, clientId: "tab-closing", watching: team, typingTo: null });
    const feed = (await live.team.live({ teamId: team, lastEventId: null, clientId: "tab-closing" }))[Symbol.asyncIterator]();
    const first = await feed.next();
    expect(first.done).toBe(false);
    // The first message is the whole state.
    const message = (first.value as unknown as [string, TeamMessage])[1];
    expect(message.type === "state" && message.state.presence.map((p) => p.clientId)).toEqual(["tab-closing"]);
    // The tab closes: the feed's generator ends (as when the client disconnects).
    await feed.return?.();
    abort.abort();
    expect(await db.presence.count({ where: { clientId: "tab-closing" } })).toBe(0);

    await as(wes).people.presence({ teamId: team, clientId: "tab-wes-1", watching: team, typingTo: team });
    expect(await listPresence(db, team)).toHaveLength(1);
    await as(ana).people.remove({ teamId: team, userId: wes.id });
    expect(await listPresence(db, team)).toEqual([]);
    expect(await db.presence.count({ where: { userId: wes.id } })).toBe(0);
  });
});

describe("who did what", () => {
  it("records every human action with the person's name in the action's transaction, and nothing on refusal", async () => {
    const ana = await person("Ana");
    const [bea, cal] = [await person("Bea"), await person("Cal")];
    const team = await teamOf(ana, [
      [bea, "member"],
      [cal, "viewer"],
    ]);
    const b = as(bea);
    const actionsBefore = (await actionsOf(team)).length;

    const first = await b.session.prompt({ sessionId: team, text: "Plan the trip" });
    expect(first.source).toEqual({ kind: "human", userId: bea.id, name: bea.name });
    await b.session.editQueued({ sessionId: team, itemId: first.id, text: "Plan the whole trip" });
    const second = await b.session.prompt({ sessionId: team, text: "never mind" });
    await b.session.removeQueued({ sessionId: team, itemId: second.id });
    await db.session.update({ where: { id: team }, data: { activeTurnId: "turn_attribution" } });
    await b.session.steerNow({ sessionId: team, itemId: first.id });
    await b.session.stop({ sessionId: team });
    const task = await createTask(db, leadOf(team), { subject: "Book", description: "" });
    const changed = await b.team.updateTask({ teamId: team, taskId: task.id, expectedRevision: 1, action: "edit", subject: "Book the train" });
    expect(changed.changedBy).toEqual({ kind: "person", id: bea.id, name: bea.name });
    await db.session.update({ where: { id: team }, data: { activeTurnId: null, abortRequest: null } });
    const helper = await b.team.addTeammate({ teamId: team, name: "planner", description: "Plans", prompt: "Plan" });
    expect(helper.addedBy).toEqual({ id: bea.id, name: bea.name });
    const fork = await b.session.fork({ sessionId: team });
    const invite = await as(ana).people.invite({ teamId: team, role: "viewer" });
    await as(ana).people.revokeInvite({ teamId: team, inviteId: invite.id });
    const open = await as(ana).people.invite({ teamId: team, role: "viewer" });
    const dee = await person("Dee");
    await as(dee).people.accept({ token: open.token });
    await as(ana).people.setRole({ teamId: team, userId: dee.id, role: "member" });
    await as(ana).people.remove({ teamId: team, userId: dee.id });
    await as(cal).people.leave({ teamId: team });

    const recorded = (await actionsOf(team)).slice(actionsBefore).map((a) => [a.action, a.userName, a.sessionId]);
    expect(recorded).toEqual([
      ["prompt", bea.name, team],
      ["queue_edited", bea.name, team],
      ["prompt", bea.name, team],
      ["queue_removed", bea.name, team],
      ["steer_now", bea.name, team],
      ["stop", bea.name, team],
      ["task_changed", bea.name, null],
      ["teammate_added", bea.name, null],
      ["fork", bea.name, team],
      ["invite_created", ana.name, null],
      ["invite_revoked", ana.name, null],
      ["invite_created", ana.name, null],
      ["joined", dee.name, null],
      ["role_changed", ana.name, null],
      ["person_removed", ana.name, null],
      ["left", cal.name, null],
    ]);
    const removed = (await actionsOf(team)).find((a) => a.action === "queue_removed");
    expect(removed?.detail).toEqual({ itemId: second.id, text: "never mind" });
    expect((await actionsOf(asSessionId(fork.id))).map((a) => a.userName)).toEqual([bea.name]);

    // Refusals record nothing and change nothing.
    const viewer = await person("Viewer");
    const outsider = await person("Outsider");
    await db.teamPerson.create({ data: { teamId: team, userId: viewer.id, role: "viewer" } });
    const before = await tableDigests(db);
    for (const refused of [
      () => as(viewer).session.prompt({ sessionId: team, text: "let me" }),
      () => as(viewer).team.updateTask({ teamId: team, taskId: task.id, expectedRevision: 2, action: "edit", subject: "mine" }),
      () => as(viewer).session.stop({ sessionId: team }),
      () => as(viewer).session.fork({ sessionId: team }),
      () => as(bea).people.invite({ teamId: team, role: "viewer" }),
      () => as(ana).people.leave({ teamId: team }),
      () => as(outsider).people.accept({ token: invite.token }),
      () => as(bea).team.updateTask({ teamId: team, taskId: task.id, expectedRevision: 1, action: "edit", subject: "stale" }),
    ]) {
      expect(await codeOf(refused())).not.toBe("OK");
    }
    expect(await tableDigests(db)).toEqual(before);
  });
});

describe("limits", () => {
  it("caps open invite links per team and API tokens per person, making nothing past the cap", async () => {
    const ana = await person("Ana");
    const team = await teamOf(ana);
    for (let i = 0; i < LIMITS.openInvitesPerTeam; i++) await createInvite(db, ana, team, { role: "viewer", expiresInHours: 1 });
    expect(await codeOf(createInvite(db, ana, team, { role: "viewer", expiresInHours: 1 }))).toBe("PEOPLE_LIMIT");
    // Used, revoked or expired links do not count.
    await db.teamInvite.updateMany({ where: { teamId: team }, data: { revokedAt: new Date() } });
    await createInvite(db, ana, team, { role: "viewer", expiresInHours: 1 });
    for (let i = 0; i < LIMITS.apiTokensPerPerson; i++) await createApiToken(db, ana.id, `t${i}`);
    expect(await codeOf(createApiToken(db, ana.id, "one more"))).toBe("PEOPLE_LIMIT");
    expect(await db.apiToken.count({ where: { userId: ana.id } })).toBe(LIMITS.apiTokensPerPerson);
  });

  it("counts a person's API tokens under their lock: creates racing for the last place make one token", async () => {
    const ana = await person("Ana");
    for (let i = 0; i < LIMITS.apiTokensPerPerson - 1; i++) await createApiToken(db, ana.id, `t${i}`);
    // One create takes the last place and holds its transaction open…
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let created!: () => void;
    const inside = new Promise<void>((r) => (created = r));
    const holder = inTx(db, async (tx) => {
      await createApiToken(tx, ana.id, "last place");
      created();
      await held;
    });
    await inside;
    // …while two more start on other connections: they must wait for it, not count past it.
    let settled = 0;
    const racers = [1, 2].map((i) => codeOf(createApiToken(db2, ana.id, `racer ${i}`)).finally(() => settled++));
    await expect.poll(async () => settled === 2 || (await lockWaiters(db)) === 2).toBe(true);
    release();
    await holder;
    expect(await Promise.all(racers)).toEqual(["PEOPLE_LIMIT", "PEOPLE_LIMIT"]);
    expect(await db.apiToken.count({ where: { userId: ana.id } })).toBe(LIMITS.apiTokensPerPerson);
  });
});

describe("the people list", () => {
  it("shows emails to owners only", async () => {
    const ana = await person("Ana");
    const bo = await person("Bo");
    const team = await teamOf(ana, [[bo, "member"]]);
    expect((await as(ana).people.list({ teamId: team })).map((p) => p.email)).toEqual([ana.email, bo.email]);
    expect((await as(bo).people.list({ teamId: team })).map((p) => p.email)).toEqual([null, null]);
  });
});

describe("an action racing a removal", () => {
  // The request's access check runs before the action's transaction. The window between them is
  // driven here by keeping the access a request got and acting with it after the change.
  it("rolls the whole action back when the person was removed or demoted after the check", async () => {
    const owner = await person("Owner");
    const bob = await person("Bob");
    const team = await teamOf(owner, [[bob, "member"]]);
    const task = await createTask(db, leadOf(team), { subject: "Contested", description: "" });
    const checked = await authorize(db, bob, team, "act", () => new AppError("SESSION_NOT_FOUND", "no"));
    const stale = { ...checked, person: bob };

    await setRole(db, owner, team, bob.id, "viewer");
    const demoted = await tableDigests(db);
    expect(await codeOf(inTx(db, (tx) => promptAs(tx, team, { text: "sneaking in", by: stale })))).toBe("FORBIDDEN");
    expect(await codeOf(updateTask(db, leadOf(team), { taskId: task.id, expectedRevision: 1, action: "claim" }, stale))).toBe("FORBIDDEN");
    expect(await tableDigests(db)).toEqual(demoted);

    await removePerson(db, owner, team, bob.id);
    const removed = await tableDigests(db);
    expect(await codeOf(inTx(db, (tx) => promptAs(tx, team, { text: "still here?", by: stale })))).toBe("SESSION_NOT_FOUND");
    expect(await codeOf(stopAs(db, team, stale))).toBe("SESSION_NOT_FOUND");
    expect(await codeOf(updateTask(db, leadOf(team), { taskId: task.id, expectedRevision: 1, action: "claim" }, stale))).toBe("TEAM_NOT_FOUND");
    expect(await tableDigests(db)).toEqual(removed);
    expect(await db.inboxItem.count({ where: { sessionId: team } })).toBe(0);
  });

  it("waits for an action in flight before a removal commits (the share lock orders them)", async () => {
    const owner = await person("Owner");
    const bob = await person("Bob");
    const team = await teamOf(owner, [[bob, "member"]]);
    const access = { ...(await authorize(db, bob, team, "act", () => new AppError("SESSION_NOT_FOUND", "no"))), person: bob };
    // Bob's prompt holds its transaction open after recording (and so after its share lock)…
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let recorded!: () => void;
    const inside = new Promise<void>((r) => (recorded = r));
    const prompt = inTx(db, async (tx) => {
      const item = await promptAs(tx, team, { text: "mine", by: access });
      recorded();
      await held;
      return item;
    });
    await inside;
    // …so the owner's removal, on another connection, cannot commit until it does.
    let removedAt = 0;
    const removal = removePerson(db2, owner, team, bob.id).then(() => (removedAt = Date.now()));
    await expect.poll(async () => (await lockWaiters(db)) > 0).toBe(true);
    const releasedAt = Date.now();
    release();
    await Promise.all([prompt, removal]);
    expect(removedAt).toBeGreaterThanOrEqual(releasedAt);
    expect(await db.inboxItem.count({ where: { sessionId: team } })).toBe(1);
    expect(await roleIn(db, team, bob.id)).toBeNull();
  });
});
