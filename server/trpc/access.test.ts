import { randomBytes } from "node:crypto";
import { TRPCError } from "@trpc/server";
import { describe, expect } from "vitest";
import { parseEnv } from "../env";
import { AppError, type AppErrorCode } from "../errors";
import { asSessionId, type SessionId } from "../ids";
import { ActivityHub } from "../live/activity";
import { createApiToken } from "../people/api-tokens";
import { createAuth } from "../people/auth";
import { personFromHeaders, type Person } from "../people/person";
import { createInvite } from "../people/invites";
import type { Runtime } from "../runtime/runtime";
import { promptSession } from "../runtime/sessions";
import { leadOf } from "../members/membership";
import { createTask } from "../team/task-board";
import { tableDigests } from "../testing/db-snapshot";
import { databaseTest } from "../testing/fixtures";
import { createTestPerson } from "../testing/people";
import { inertRuntime, newTestSession } from "../testing/runtime-harness";
import { workspaceLimits } from "../../shared/limits";
import { writeFile } from "../workspace";
import type { TrpcContext } from "./init";
import { appRouter, createCaller } from "./root";
import { ref } from "../person-ref";

// The authorisation matrix (docs/SPEC.md §13): every procedure of appRouter, live feeds
// included, called in-process by every kind of caller. A procedure added without a row here
// fails the first test. Nothing drives the agents (the runtime is stopped), so the database
// stays still and a refusal can be checked to have changed no row of any table.
//
// Who: anonymous, a stranger (signed in, not in the team), the team's viewer, member and
// owner (also the instance's owner), the owner's API token (resolved from an Authorization
// header as the app server does), and a teammate's session id named where a team id belongs.

type Who = "anonymous" | "stranger" | "viewer" | "member" | "owner" | "token";
/** What a procedure needs: nothing, a signed-in person, the instance owner, or a team role. */
/** `signedIn`: a person in a browser session (an API token cannot manage tokens or settings). */
type Need = "public" | "person" | "signedIn" | "instanceOwner" | "view" | "act" | "own";

/** A team with something in it for every procedure to work on. */
interface Team {
  lead: SessionId;
  /** A teammate's session, which nothing drives. */
  mate: SessionId;
  taskId: string;
  /** A queued prompt of the Lead (the Lead's turn is open, so it can be steered in). */
  queued: string;
  /** The same for the teammate. */
  mateQueued: string;
  inviteId: string;
  inviteToken: string;
  /** A workspace file at version 1. */
  file: string;
}

interface Row {
  need: Need;
  /** The id the input names: a session (any of the team's) or a team (its Lead's id only). */
  target?: "session" | "team";
  input: (t: Team, me: Person | null) => unknown;
  /** Domain refusals that still mean the access check let the caller through. */
  passes?: Partial<Record<Who, AppErrorCode>>;
}

const MATRIX: Record<string, Row> = {
  "account.status": { need: "public", input: () => undefined },
  "account.setOpenSignUp": { need: "instanceOwner", input: () => ({ open: true }) },
  "account.tokens": { need: "signedIn", input: () => undefined },
  "account.createToken": { need: "signedIn", input: () => ({ name: "script" }) },
  "account.revokeToken": { need: "signedIn", input: () => ({ id: "tok_placeholder" }) },
  "account.revokeAllTokens": { need: "signedIn", input: () => undefined },

  // The instance owner or a team's owner (people/audit.test.ts): who owns a team changes as the
  // matrix runs (anyone may create one), so AUDIT_FORBIDDEN is the domain's answer.
  "audit.list": { need: "person", input: () => ({}), passes: { stranger: "AUDIT_FORBIDDEN", viewer: "AUDIT_FORBIDDEN", member: "AUDIT_FORBIDDEN" } },
  "audit.exportCsv": { need: "person", input: () => ({ kind: "role_changed" }), passes: { stranger: "AUDIT_FORBIDDEN", viewer: "AUDIT_FORBIDDEN", member: "AUDIT_FORBIDDEN" } },

  "approvals.pending": { need: "view", target: "team", input: (t) => ({ teamId: t.lead }) },
  "approvals.plans": { need: "view", target: "team", input: (t) => ({ teamId: t.lead }) },
  "approvals.decidePlan": {
    need: "act",
    target: "team",
    input: (t) => ({ teamId: t.lead, planId: "pln_placeholder", approve: true }),
    passes: { member: "PLAN_NOT_FOUND", owner: "PLAN_NOT_FOUND", token: "PLAN_NOT_FOUND" },
  },
  "approvals.setPlanApproval": { need: "own", target: "team", input: (t) => ({ teamId: t.lead, on: false }) },
  "approvals.decide": {
    need: "act",
    target: "team",
    input: (t) => ({ teamId: t.lead, approvalId: "apr_placeholder", approve: true }),
    passes: { member: "APPROVAL_NOT_FOUND", owner: "APPROVAL_NOT_FOUND", token: "APPROVAL_NOT_FOUND" },
  },
  "approvals.answer": {
    need: "act",
    target: "team",
    input: (t) => ({ teamId: t.lead, approvalId: "apr_placeholder", answer: "yes" }),
    passes: { member: "APPROVAL_NOT_FOUND", owner: "APPROVAL_NOT_FOUND", token: "APPROVAL_NOT_FOUND" },
  },
  "approvals.policy": { need: "view", target: "team", input: (t) => ({ teamId: t.lead }) },
  // The inert runtime's tool list is the built-in one.
  "approvals.setExpiry": { need: "own", target: "team", input: (t) => ({ teamId: t.lead, minutes: 60 }) },
  "approvals.setPolicy": { need: "own", target: "team", input: (t) => ({ teamId: t.lead, tool: "current_time", mode: "ask" }) },

  "people.list": { need: "view", target: "team", input: (t) => ({ teamId: t.lead }) },
  "people.invites": { need: "own", target: "team", input: (t) => ({ teamId: t.lead }) },
  "people.invite": { need: "own", target: "team", input: (t) => ({ teamId: t.lead, role: "viewer" }) },
  "people.revokeInvite": { need: "own", target: "team", input: (t) => ({ teamId: t.lead, inviteId: t.inviteId }) },
  "people.inviteInfo": { need: "public", input: (t) => ({ token: t.inviteToken }) },
  "people.accept": { need: "person", input: (t) => ({ token: t.inviteToken }) },
  "account.toolDefaults": { need: "instanceOwner", input: () => undefined },
  "account.setToolDefault": { need: "instanceOwner", input: () => ({ tool: "current_time", mode: "allow" }) },
  "account.instanceSettings": { need: "instanceOwner", input: () => undefined },
  "account.setWebhooksPrivateOk": { need: "instanceOwner", input: () => ({ allowed: false }) },
  "webhooks.list": { need: "own", target: "team", input: (t) => ({ teamId: t.lead }) },
  "webhooks.add": { need: "own", target: "team", input: (t) => ({ teamId: t.lead, url: "http://192.0.2.1/hook", events: ["team.finished"] }) },
  "webhooks.remove": { need: "own", target: "team", input: (t) => ({ teamId: t.lead, webhookId: "whk_placeholder" }), passes: { owner: "WEBHOOK_NOT_FOUND", token: "WEBHOOK_NOT_FOUND" } },
  "mcpServers.list": { need: "view", target: "team", input: (t) => ({ teamId: t.lead }) },
  "mcpServers.add": { need: "own", target: "team", input: (t, me) => ({ teamId: t.lead, name: `srv-${(me?.id ?? "x").slice(-6).toLowerCase()}`.replace(/[^a-z0-9_-]/g, "x"), url: "http://192.0.2.1/mcp" }) },
  "mcpServers.remove": {
    need: "own",
    target: "team",
    input: (t) => ({ teamId: t.lead, serverId: "mcp_placeholder" }),
    passes: { owner: "MCP_SERVER_NOT_FOUND", token: "MCP_SERVER_NOT_FOUND" },
  },
  "mcpServers.test": {
    need: "own",
    target: "team",
    input: (t) => ({ teamId: t.lead, serverId: "mcp_placeholder" }),
    passes: { owner: "MCP_SERVER_NOT_FOUND", token: "MCP_SERVER_NOT_FOUND" },
  },
  "memory.list": { need: "view", target: "team", input: (t) => ({ teamId: t.lead, status: "proposed" }) },
  "memory.versions": {
    need: "view",
    target: "team",
    input: (t) => ({ teamId: t.lead, memoryId: "mem_placeholder" }),
    passes: { viewer: "MEMORY_NOT_FOUND", member: "MEMORY_NOT_FOUND", owner: "MEMORY_NOT_FOUND", token: "MEMORY_NOT_FOUND" },
  },
  "memory.decide": {
    need: "act",
    target: "team",
    input: (t) => ({ teamId: t.lead, memoryId: "mem_placeholder", approve: true }),
    passes: { member: "MEMORY_NOT_FOUND", owner: "MEMORY_NOT_FOUND", token: "MEMORY_NOT_FOUND" },
  },
  "memory.edit": {
    need: "act",
    target: "team",
    input: (t) => ({ teamId: t.lead, memoryId: "mem_placeholder", text: "Edited", tags: [] }),
    passes: { member: "MEMORY_NOT_FOUND", owner: "MEMORY_NOT_FOUND", token: "MEMORY_NOT_FOUND" },
  },
  "memory.delete": {
    need: "act",
    target: "team",
    input: (t) => ({ teamId: t.lead, memoryId: "mem_placeholder" }),
    passes: { member: "MEMORY_NOT_FOUND", owner: "MEMORY_NOT_FOUND", token: "MEMORY_NOT_FOUND" },
  },
  "memory.settings": { need: "view", target: "team", input: (t) => ({ teamId: t.lead }) },
  "memory.setSettings": { need: "own", target: "team", input: (t) => ({ teamId: t.lead, autoApprove: false, shared: false }) },
  "memory.sharedList": { need: "person", input: () => undefined },
  "memory.share": { need: "instanceOwner", target: "team", input: (t) => ({ teamId: t.lead, memoryId: "mem_placeholder" }), passes: { owner: "MEMORY_NOT_FOUND" } },
  "memory.sharedEdit": { need: "instanceOwner", input: () => ({ memoryId: "mem_placeholder", text: "Edited", tags: [] }), passes: { owner: "MEMORY_NOT_FOUND" } },
  "memory.sharedDelete": { need: "instanceOwner", input: () => ({ memoryId: "mem_placeholder" }), passes: { owner: "MEMORY_NOT_FOUND" } },

  "routines.list": { need: "view", target: "team", input: (t) => ({ teamId: t.lead }) },
  "routines.runs": { need: "view", target: "team", input: (t) => ({ teamId: t.lead, routineId: "rtn_placeholder" }), passes: { viewer: "ROUTINE_NOT_FOUND", member: "ROUTINE_NOT_FOUND", owner: "ROUTINE_NOT_FOUND", token: "ROUTINE_NOT_FOUND" } },
  "routines.preview": { need: "person", input: () => ({ schedule: { kind: "interval", every: 1, unit: "hours" } }) },
  "routines.create": {
    need: "act",
    target: "team",
    input: (t) => ({ teamId: t.lead, name: "Matrix", prompt: "hello", schedule: { kind: "cron", cron: "0 9 * * 1", timeZone: "UTC" }, missed: "skip", overlap: "skip" }),
  },
  "routines.update": {
    need: "act",
    target: "team",
    input: (t) => ({ teamId: t.lead, routineId: "rtn_placeholder", name: "Matrix", prompt: "hello", schedule: { kind: "interval", every: 2, unit: "hours" }, missed: "skip", overlap: "skip" }),
    passes: { member: "ROUTINE_NOT_FOUND", owner: "ROUTINE_NOT_FOUND", token: "ROUTINE_NOT_FOUND" },
  },
  "routines.setPaused": { need: "act", target: "team", input: (t) => ({ teamId: t.lead, routineId: "rtn_placeholder", paused: true }), passes: { member: "ROUTINE_NOT_FOUND", owner: "ROUTINE_NOT_FOUND", token: "ROUTINE_NOT_FOUND" } },
  "routines.runNow": { need: "act", target: "team", input: (t) => ({ teamId: t.lead, routineId: "rtn_placeholder" }), passes: { member: "ROUTINE_NOT_FOUND", owner: "ROUTINE_NOT_FOUND", token: "ROUTINE_NOT_FOUND" } },
  "routines.delete": { need: "act", target: "team", input: (t) => ({ teamId: t.lead, routineId: "rtn_placeholder" }), passes: { member: "ROUTINE_NOT_FOUND", owner: "ROUTINE_NOT_FOUND", token: "ROUTINE_NOT_FOUND" } },

  "notifications.list": { need: "person", input: () => undefined },
  "notifications.markRead": { need: "person", input: () => ({ all: true }) },
  "notifications.settings": { need: "person", input: () => undefined },
  "notifications.setSettings": { need: "person", input: () => ({ muted: ["mention"] }) },
  "notifications.live": { need: "person", input: () => undefined },
  "people.setRole": { need: "own", target: "team", input: (t) => ({ teamId: t.lead, userId: people.viewer.id, role: "member" }) },
  "people.remove": { need: "own", target: "team", input: (t) => ({ teamId: t.lead, userId: people.viewer.id }) },
  // The team's only owner may not leave it: a rule of the team, not of access.
  "people.leave": { need: "view", target: "team", input: (t) => ({ teamId: t.lead }), passes: { owner: "LAST_OWNER", token: "LAST_OWNER" } },
  "people.presence": {
    need: "view",
    target: "team",
    input: (t, me) => ({ teamId: t.lead, clientId: `tab-${me?.id ?? "anon"}`.slice(0, 64), watching: t.lead, typingTo: t.lead }),
  },

  "session.models": { need: "person", input: () => undefined },
  "session.list": { need: "person", input: () => undefined },
  "session.create": { need: "person", input: () => ({ title: "my own team" }) },
  "session.get": { need: "view", target: "session", input: (t) => ({ sessionId: t.lead }) },
  "session.transcript": { need: "view", target: "session", input: (t) => ({ sessionId: t.lead }) },
  "session.prompt": { need: "act", target: "session", input: (t) => ({ sessionId: t.lead, text: "hello" }) },
  "session.editQueued": { need: "act", target: "session", input: (t) => ({ sessionId: t.lead, itemId: t.queued, text: "edited" }) },
  "session.removeQueued": { need: "act", target: "session", input: (t) => ({ sessionId: t.lead, itemId: t.queued }) },
  "session.steerNow": { need: "act", target: "session", input: (t) => ({ sessionId: t.lead, itemId: t.queued }) },
  "session.stop": { need: "act", target: "session", input: (t) => ({ sessionId: t.lead }) },
  "session.fork": { need: "act", target: "session", input: (t) => ({ sessionId: t.lead }) },
  "session.live": { need: "view", target: "session", input: (t) => ({ sessionId: t.lead, lastEventId: null }) },

  "team.list": { need: "person", input: () => undefined },
  "team.roster": { need: "view", target: "team", input: (t) => ({ teamId: t.lead }) },
  "team.addTeammate": { need: "act", target: "team", input: (t) => ({ teamId: t.lead, name: "helper", description: "Helps", prompt: "Help" }) },
  "team.setBudget": { need: "act", target: "team", input: (t) => ({ teamId: t.lead, tokens: 1_000_000, costUsd: null }) },
  "team.stop": { need: "act", target: "team", input: (t) => ({ teamId: t.lead }) },
  "team.tasks": { need: "view", target: "team", input: (t) => ({ teamId: t.lead }) },
  "team.task": { need: "view", target: "team", input: (t) => ({ teamId: t.lead, taskId: t.taskId }) },
  "team.updateTask": {
    need: "act",
    target: "team",
    input: (t) => ({ teamId: t.lead, taskId: t.taskId, expectedRevision: 1, action: "edit", subject: "Renamed" }),
  },
  "team.messages": { need: "view", target: "team", input: (t) => ({ teamId: t.lead }) },
  "team.live": { need: "view", target: "team", input: (t, me) => ({ teamId: t.lead, lastEventId: null, clientId: `tab-${me?.id ?? "anon"}` }) },

  "timeline.page": { need: "view", target: "team", input: (t) => ({ teamId: t.lead, limit: 10 }) },
  "timeline.live": { need: "view", target: "team", input: (t) => ({ teamId: t.lead, lastEventId: null }) },

  "workspace.list": { need: "view", target: "team", input: (t) => ({ teamId: t.lead }) },
  "workspace.live": { need: "view", target: "team", input: (t) => ({ teamId: t.lead, lastEventId: null }) },
  "workspace.read": { need: "view", target: "team", input: (t) => ({ teamId: t.lead, path: t.file }) },
  "workspace.history": { need: "view", target: "team", input: (t) => ({ teamId: t.lead, path: t.file }) },
  "workspace.search": { need: "view", target: "team", input: (t) => ({ teamId: t.lead, query: "matrix" }) },
  "workspace.write": { need: "act", target: "team", input: (t) => ({ teamId: t.lead, path: t.file, content: "edited", expectedVersion: 1 }) },
  "workspace.delete": { need: "act", target: "team", input: (t) => ({ teamId: t.lead, path: t.file, expectedVersion: 1 }) },
};

type Refusal = { code: TRPCError["code"]; appCode: AppErrorCode };
const UNAUTHORIZED: Refusal = { code: "UNAUTHORIZED", appCode: "UNAUTHORIZED" };
const FORBIDDEN: Refusal = { code: "FORBIDDEN", appCode: "FORBIDDEN" };
const notFound = (row: Row): Refusal => ({ code: "NOT_FOUND", appCode: row.target === "team" ? "TEAM_NOT_FOUND" : "SESSION_NOT_FOUND" });
/** The codes of the access check itself: an allowed caller never sees them. */
const ACCESS_CODES: readonly AppErrorCode[] = ["UNAUTHORIZED", "FORBIDDEN", "SESSION_NOT_FOUND", "TEAM_NOT_FOUND"];

/** What `who` gets from a procedure: null (let through) or the refusal. */
function expected(row: Row, who: Who): Refusal | null {
  if (row.need === "public") return null;
  if (who === "anonymous") return UNAUTHORIZED;
  if (row.need === "person") return null;
  if (row.need === "signedIn") return who === "token" ? FORBIDDEN : null;
  const role = who === "token" ? "owner" : who;
  if (row.need === "instanceOwner") return role === "owner" && who !== "token" ? null : FORBIDDEN;
  if (role === "stranger") return notFound(row);
  if (row.need === "view") return null;
  if (role === "viewer") return FORBIDDEN;
  if (row.need === "act") return null;
  return role === "member" ? FORBIDDEN : null;
}

// ------------------------------------------------------------------------------------------
// the file's database, a stopped runtime (nothing drives agents), and the people

let db: TrpcContext["db"];
let hub: ActivityHub;
let runtime: Runtime;
const people = {} as Record<Exclude<Who, "anonymous">, Person>;
let shared: Team;

const it = databaseTest().extend("hub", { scope: "file" }, async ({ tdb }, { onCleanup }) => {
  const h = new ActivityHub(tdb);
  await h.start();
  onCleanup(() => h.close());
  return h;
});

it.beforeAll(async ({ db: fileDb, hub: fileHub }) => {
  db = fileDb;
  hub = fileHub;
  runtime = await inertRuntime(db, hub);
  for (const who of ["stranger", "viewer", "member", "owner"] as const) people[who] = await createTestPerson(db, `Matrix ${who}`);
  // The team's owner made the instance too: the instance's settings are theirs.
  await db.user.update({ where: { id: people.owner.id }, data: { instanceOwner: true } });
  people.owner.instanceOwner = true;
  // The token column: the owner's API token, read from a request's headers as the server does.
  const { token } = await createApiToken(db, people.owner.id, "matrix");
  const auth = createAuth(db, { appUrl: "http://127.0.0.1:3000", secret: "s".repeat(32), origins: ["http://127.0.0.1:3000"], signInPerMinute: 10 });
  const fromToken = await personFromHeaders(auth, db, new Headers({ authorization: `Bearer ${token}` }));
  expect(fromToken).toEqual({ ...people.owner, credential: { kind: "token", id: expect.any(String) } });
  people.token = fromToken!;
  shared = await newTeam();
});

async function newTeam(): Promise<Team> {
  const { owner, member, viewer } = people;
  const lead = await newTestSession(db, "matrix team", owner);
  await db.teamPerson.createMany({
    data: [
      { teamId: lead, userId: member.id, role: "member" },
      { teamId: lead, userId: viewer.id, role: "viewer" },
    ],
  });
  const mate = asSessionId(`ses_mate_${randomBytes(8).toString("hex")}`);
  await db.session.create({ data: { id: mate, teamId: lead, memberName: "mate", title: "mate", model: { provider: "scripted", model: "keyless" } } });
  await db.teamMember.create({ data: { teamId: lead, name: "mate", sessionId: mate, description: "d", context: "fresh", phase: "active" } });
  const task = await createTask(db, leadOf(lead), { subject: "Matrix task", description: "" });
  const item = await promptSession(db, lead, { text: "queued", from: ref(owner) });
  const mateItem = await promptSession(db, mate, { text: "queued for the mate", from: ref(owner) });
  // Open turns (no driver: the runtime is stopped), so "steer now" applies.
  await db.session.updateMany({ where: { id: { in: [lead, mate] } }, data: { activeTurnId: "turn_matrix" } });
  const invite = await createInvite(db, owner, lead, { role: "member", expiresInHours: 1 });
  const file = await writeFile(db, lead, { kind: "member", member: leadOf(lead) }, { path: "matrix.md", content: "# matrix" }, workspaceLimits());
  return { lead, mate, taskId: task.id, queued: item.id, mateQueued: mateItem.id, inviteId: invite.id, inviteToken: invite.token, file: file.path };
}

const ctxOf = (person: Person | null): TrpcContext => ({ db, env: parseEnv({}), hub, runtime, person });
const personOf = (who: Who): Person | null => (who === "anonymous" ? null : people[who]);
const typeOf = (path: string) => (appRouter._def.procedures as unknown as Record<string, { _def: { type: string } }>)[path]!._def.type;

type Outcome = { ok: true } | { ok: false; code: string; appCode: string | null; message: string; details: unknown };

/** Calls `path` as `person`; a feed counts as let through once its first message arrives. */
async function call(person: Person | null, path: string, input: unknown): Promise<Outcome> {
  const abort = new AbortController();
  let node: unknown = createCaller(ctxOf(person), { signal: abort.signal });
  for (const key of path.split(".")) node = (node as Record<string, unknown>)[key];
  try {
    const value = await (node as (input: unknown) => Promise<unknown>)(input);
    if (typeOf(path) === "subscription") {
      const iterator = (value as AsyncIterable<unknown>)[Symbol.asyncIterator]();
      const first = await iterator.next();
      await iterator.return?.();
      if (first.done) throw new Error(`${path}: the feed ended without a message`);
    }
    return { ok: true };
  } catch (e) {
    if (!(e instanceof TRPCError)) throw e;
    const cause = e.cause instanceof AppError ? e.cause : null;
    return { ok: false, code: e.code, appCode: cause?.code ?? null, message: e.message, details: cause?.details ?? null };
  } finally {
    abort.abort();
  }
}

/** The input `row` takes, for `who` (the revoke-token row revokes the caller's own token). */
async function inputFor(path: string, row: Row, team: Team, person: Person | null): Promise<unknown> {
  if (path === "account.revokeToken" && person) return { id: (await createApiToken(db, person.id, "to revoke")).id };
  return row.input(team, person);
}

/**
 * Runs the matrix for `who` and returns the mismatches. Refusals run on the shared team and
 * must leave every table as it was; calls let through run on a fresh team each (they change
 * it) and must not meet an access refusal. `team` swaps in other ids (a teammate's session).
 */
async function runMatrix(who: Who, opts: { swap?: (t: Team) => Team; expect?: (row: Row, who: Who) => Refusal | null } = {}) {
  const failures: string[] = [];
  const swap = opts.swap ?? ((t: Team) => t);
  const person = personOf(who);
  for (const [path, row] of Object.entries(MATRIX)) {
    const want = (opts.expect ?? expected)(row, who);
    const team = swap(want ? shared : await newTeam());
    const input = await inputFor(path, row, team, person);
    const before = want ? await tableDigests(db) : null;
    // Revoking every token would end the token column's own: the rows come back after the call.
    const tokens = path === "account.revokeAllTokens" && person ? await db.apiToken.findMany({ where: { userId: person.id } }) : [];
    const got = await call(person, path, input);
    if (tokens.length > 0) await db.apiToken.createMany({ data: tokens, skipDuplicates: true });
    if (want) {
      if (got.ok || got.code !== want.code || got.appCode !== want.appCode) {
        failures.push(`${path}: expected ${want.code}/${want.appCode}, got ${got.ok ? "OK" : `${got.code}/${got.appCode}`}`);
      }
      const after = await tableDigests(db);
      for (const t of Object.keys(after)) if (after[t] !== before![t]) failures.push(`${path}: refused, but table ${t} changed`);
    } else if (!got.ok) {
      const allowed = row.passes?.[who];
      if (got.appCode !== allowed || ACCESS_CODES.includes(got.appCode as AppErrorCode)) {
        failures.push(`${path}: expected to be let through, got ${got.code}/${got.appCode}: ${got.message}`);
      }
    }
  }
  return failures;
}

describe("the authorisation matrix", () => {
  it("has a row for every procedure (a new procedure needs one)", () => {
    expect(Object.keys(MATRIX).sort()).toEqual(Object.keys(appRouter._def.procedures).sort());
  });

  it("anonymous: UNAUTHORIZED for everything but account.status and people.inviteInfo, nothing persisted", async () => {
    expect(await runMatrix("anonymous")).toEqual([]);
    expect(Object.entries(MATRIX).filter(([, r]) => r.need === "public").map(([p]) => p)).toEqual(["account.status", "people.inviteInfo"]);
  });

  it("a stranger: NOT_FOUND for the team's data, exactly as for a team that does not exist", async () => {
    expect(await runMatrix("stranger")).toEqual([]);
    // The refusal says nothing a missing team would not: same codes, same message and details
    // once the id is swapped for a made-up one.
    const missing = asSessionId(`ses_${randomBytes(12).toString("hex")}`.slice(0, shared.lead.length));
    const failures: string[] = [];
    for (const [path, row] of Object.entries(MATRIX)) {
      if (!row.target) continue;
      const real = await call(people.stranger, path, row.input(shared, people.stranger));
      const fake = await call(people.stranger, path, row.input({ ...shared, lead: missing }, people.stranger));
      const norm = (o: Outcome) => JSON.stringify(o).replaceAll(shared.lead, "<id>").replaceAll(missing, "<id>");
      if (norm(real) !== norm(fake)) failures.push(`${path}: ${norm(real)} vs ${norm(fake)}`);
    }
    expect(failures).toEqual([]);
  });

  it("a stranger's own lists do not show the team", async () => {
    const caller = createCaller(ctxOf(people.stranger));
    expect((await caller.session.list()).map((s) => s.id)).not.toContain(shared.lead);
    expect((await caller.team.list()).map((t) => t.id)).not.toContain(shared.lead);
    const member = createCaller(ctxOf(people.member));
    expect((await member.team.list()).find((t) => t.id === shared.lead)).toMatchObject({ myRole: "member" });
  });

  it("a viewer: watches and reads; acting and managing people FORBIDDEN, nothing persisted", async () => {
    expect(await runMatrix("viewer")).toEqual([]);
  });

  it("a member: acts; managing people FORBIDDEN, nothing persisted", async () => {
    expect(await runMatrix("member")).toEqual([]);
  });

  it("the owner: everything", async () => {
    expect(await runMatrix("owner")).toEqual([]);
  });

  it("the owner's API token: the owner's rights", async () => {
    expect(await runMatrix("token")).toEqual([]);
  });

  it("a viewer's API token: a viewer's rights, no more", async () => {
    const { token } = await createApiToken(db, people.viewer.id, "viewer script");
    const auth = createAuth(db, { appUrl: "http://127.0.0.1:3000", secret: "s".repeat(32), origins: ["http://127.0.0.1:3000"], signInPerMinute: 10 });
    const viewer = await personFromHeaders(auth, db, new Headers({ authorization: `Bearer ${token}` }));
    expect(viewer?.id).toBe(people.viewer.id);
    const before = await tableDigests(db);
    const got = await call(viewer, "session.prompt", { sessionId: shared.lead, text: "hi" });
    expect(got).toMatchObject({ ok: false, code: "FORBIDDEN", appCode: "FORBIDDEN" });
    expect(await tableDigests(db)).toEqual(before);
    // An unknown or malformed token is nobody.
    expect(await personFromHeaders(auth, db, new Headers({ authorization: "Bearer at_nope" }))).toBeNull();
    expect(await personFromHeaders(auth, db, new Headers({ authorization: `Basic ${token}` }))).toBeNull();
  });

  it("removal ends access at once: the member's open feeds end with NOT_FOUND", async () => {
    const t = await newTeam();
    const abort = new AbortController();
    const member = createCaller(ctxOf(people.member), { signal: abort.signal });
    const clientId = "tab-member-removed";
    await member.people.presence({ teamId: t.lead, clientId, watching: t.lead, typingTo: t.lead });
    const session = (await member.session.live({ sessionId: t.lead, lastEventId: null }))[Symbol.asyncIterator]();
    const room = (await member.team.live({ teamId: t.lead, lastEventId: null, clientId }))[Symbol.asyncIterator]();
    const timeline = (await member.timeline.live({ teamId: t.lead, lastEventId: null }))[Symbol.asyncIterator]();
    expect((await session.next()).done).toBe(false);
    expect((await room.next()).done).toBe(false);
    expect((await timeline.next()).done).toBe(false);

    await createCaller(ctxOf(people.owner)).people.remove({ teamId: t.lead, userId: people.member.id });
    /** Reads on until the feed fails; a feed that just ends would be a silent refusal. */
    const endOf = async (feed: AsyncIterator<unknown>) => {
      for (;;) {
        try {
          if ((await feed.next()).done) return "ended without an error";
        } catch (e) {
          return e;
        }
      }
    };
    const [sessionEnd, roomEnd, timelineEnd] = await Promise.all([endOf(session), endOf(room), endOf(timeline)]);
    abort.abort();
    expect(sessionEnd).toBeInstanceOf(TRPCError);
    expect(sessionEnd).toMatchObject({ code: "NOT_FOUND", cause: { code: "SESSION_NOT_FOUND" } });
    expect(roomEnd).toMatchObject({ code: "NOT_FOUND", cause: { code: "TEAM_NOT_FOUND" } });
    expect(timelineEnd).toMatchObject({ code: "NOT_FOUND", cause: { code: "TEAM_NOT_FOUND" } });
    expect(await db.presence.count({ where: { teamId: t.lead } })).toBe(0);
    expect(await db.personAction.findFirst({ where: { teamId: t.lead, action: "person_removed" } })).toMatchObject({
      userId: people.owner.id,
      userName: people.owner.name,
      detail: { userId: people.member.id },
    });
  });

  // One test per person: each runs the whole matrix.
  it.each(["stranger", "viewer", "member", "owner"] as const)(
    "a teammate's session id where a team id belongs (%s): TEAM_NOT_FOUND; as a session id it resolves to its team",
    async (who) => {
      const mateFor = (t: Team): Team => ({ ...t, lead: t.mate, queued: t.mateQueued });
      const failures = await runMatrix(who, {
        swap: mateFor,
        // The team is looked up once the caller may do the procedure at all (the instance's owner's).
        expect: (row, w) => (row.target === "team" && w !== "anonymous" && (row.need !== "instanceOwner" || !expected(row, w)) ? { code: "NOT_FOUND", appCode: "TEAM_NOT_FOUND" } : expected(row, w)),
      });
      expect(failures, who).toEqual([]);
    },
  );
});
