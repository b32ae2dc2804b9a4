import superjson from "superjson";
import { describe, expect } from "vitest";
import type { Db } from "../db/client";
import { asSessionId, type SessionId } from "../ids";
import type { AppServer } from "../main";
import { createTask } from "../team/task-board";
import { encodeCursor } from "../team/timeline";
import { leadOf } from "../members/membership";
import { asUserId } from "../ids";
import { workspaceLimits } from "../../shared/limits";
import { writeFile } from "../workspace";
import { tableDigests } from "../testing/db-snapshot";
import { appServerTest } from "../testing/app-tests";
import { signUpOverHttp } from "../testing/people";
import { newTestSession } from "../testing/runtime-harness";
import { MAX_BATCH_SIZE } from "../../shared/batch";
import { appRouter } from "./root";

// Every procedure over real HTTP with hostile input: NUL characters and lone surrogates in
// every text field, integers past Postgres' range, wrong types, a teammate's session id where
// a team id belongs, oversized batches. Never a 5xx, always an appCode, no stack trace, and a
// refusal leaves every table as it was. The calls are a signed-in team owner's, as their pages
// make them (session cookie, and the app's Origin on mutations), so the input checks, not the
// access checks, are what refuses.

const it = appServerTest({ AUTH_SIGN_IN_PER_MINUTE: "10000" }, { poolSize: 3 });
// The file's client and server (fixtures), bound once for the helpers below, and its team.
let server: AppServer;
let db: Db;
let lead: SessionId;
let mate: SessionId;
let cookie: string;

it.beforeAll(async ({ db: fileClient, server: fileServer }) => {
  db = fileClient;
  server = fileServer;
  const ana = await signUpOverHttp(server.url, { name: "Ana" });
  cookie = ana.cookie;
  const user = await db.user.findUniqueOrThrow({ where: { email: ana.email } });
  lead = await newTestSession(db, "fuzzed team", { id: asUserId(user.id), name: user.name, email: user.email, instanceOwner: true });
  // A teammate that nothing drives (no work), so the database stays still between calls.
  mate = asSessionId("ses_fuzz_teammate_0001");
  await db.session.create({ data: { id: mate, teamId: lead, memberName: "mate", title: "mate", model: { provider: "scripted", model: "keyless" } } });
  await db.teamMember.create({ data: { teamId: lead, name: "mate", sessionId: mate, description: "d", context: "fresh", phase: "active" } });
  await createTask(db, leadOf(lead), { subject: "Fuzz me", description: "" });
  await writeFile(db, lead, { kind: "member", member: leadOf(lead) }, { path: "docs/fuzz.md", content: "# fuzz" }, workspaceLimits());
});

type Input = Record<string, unknown>;

/** A well-formed timeline cursor (the fuzzer breaks it). */
const SOME_CURSOR = encodeCursor({ s: {}, m: 0, a: 0, w: 0, t: 0 });

/** A valid input for every procedure; the fuzzer breaks one field at a time. */
function baseInputs(): Record<string, Input | undefined> {
  return {
    "session.models": undefined,
    "session.list": { limit: 10 },
    "session.get": { sessionId: lead },
    "session.create": { title: "t" },
    "session.transcript": { sessionId: lead, beforeSeq: 5, limit: 10 },
    "session.prompt": { sessionId: lead, text: "hi" },
    "session.editQueued": { sessionId: lead, itemId: "msg_x", text: "t" },
    "session.removeQueued": { sessionId: lead, itemId: "msg_x" },
    "session.steerNow": { sessionId: lead, itemId: "msg_x" },
    "session.stop": { sessionId: lead },
    "session.fork": { sessionId: lead, throughSeq: 1, title: "f" },
    "session.live": { sessionId: lead, lastEventId: "1" },
    "team.list": { limit: 10 },
    "team.roster": { teamId: lead },
    "team.addTeammate": { teamId: lead, name: "fuzzed", description: "d", prompt: "p" },
    "team.setBudget": { teamId: lead, tokens: 1000, costUsd: null },
    "team.stop": { teamId: lead },
    "team.tasks": { teamId: lead, status: "pending", owner: "lead", cursor: "task-1", limit: 5 },
    "team.task": { teamId: lead, taskId: "task-1" },
    "team.updateTask": { teamId: lead, taskId: "task-1", expectedRevision: 1, action: "edit", subject: "s", description: "d", writeScopes: ["src"] },
    "team.messages": { teamId: lead, afterSeq: 0, limit: 5 },
    "team.live": { teamId: lead, lastEventId: null, clientId: "fuzz-tab-0001" },
    "timeline.page": { teamId: lead, before: SOME_CURSOR, limit: 5, members: ["lead"], kinds: ["turn"] },
    "timeline.live": { teamId: lead, lastEventId: SOME_CURSOR, members: ["lead"], kinds: ["turn"] },
    "account.status": undefined,
    "account.setOpenSignUp": { open: true },
    "account.tokens": undefined,
    "account.createToken": { name: "script" },
    "account.revokeToken": { id: "tok_x" },
    "account.revokeAllTokens": undefined,
    "audit.list": { kind: "signed_in", before: "1" },
    "audit.exportCsv": { actor: "someone" },
    "approvals.pending": { teamId: lead },
    "approvals.plans": { teamId: lead },
    "approvals.decidePlan": { teamId: lead, planId: "pln_x", approve: false, note: "n" },
    "approvals.setPlanApproval": { teamId: lead, on: false },
    "approvals.decide": { teamId: lead, approvalId: "apr_x", approve: false, note: "n", alwaysAllow: false },
    "approvals.answer": { teamId: lead, approvalId: "apr_x", answer: "a" },
    "approvals.policy": { teamId: lead },
    "approvals.setExpiry": { teamId: lead, minutes: 30 },
    "approvals.setPolicy": { teamId: lead, tool: "current_time", mode: "allow" },
    "account.toolDefaults": undefined,
    "account.setToolDefault": { tool: "current_time", mode: "allow" },
    "account.instanceSettings": undefined,
    "account.setWebhooksPrivateOk": { allowed: false },
    "webhooks.list": { teamId: lead },
    "webhooks.add": { teamId: lead, url: "http://192.0.2.1/hook", events: ["team.finished"] },
    "webhooks.remove": { teamId: lead, webhookId: "whk_x" },
    "mcpServers.list": { teamId: lead },
    "mcpServers.add": { teamId: lead, name: "fuzz", url: "http://192.0.2.1/mcp", bearerToken: "t", headers: { "X-Key": "v" } },
    "mcpServers.remove": { teamId: lead, serverId: "mcp_x" },
    "mcpServers.test": { teamId: lead, serverId: "mcp_x" },
    "memory.list": { teamId: lead, status: "approved" },
    "memory.versions": { teamId: lead, memoryId: "mem_x" },
    "memory.decide": { teamId: lead, memoryId: "mem_x", approve: true, note: "n", edit: { text: "t", tags: ["a"] } },
    "memory.edit": { teamId: lead, memoryId: "mem_x", text: "t", tags: ["a"] },
    "memory.delete": { teamId: lead, memoryId: "mem_x" },
    "memory.settings": { teamId: lead },
    "memory.setSettings": { teamId: lead, autoApprove: false, shared: false },
    "memory.sharedList": undefined,
    "routines.list": { teamId: lead },
    "routines.runs": { teamId: lead, routineId: "rtn_x" },
    "routines.preview": { schedule: { kind: "cron", cron: "0 9 * * *", timeZone: "UTC" } },
    "routines.create": { teamId: lead, name: "n", prompt: "p", schedule: { kind: "interval", every: 1, unit: "hours" }, missed: "skip", overlap: "queue" },
    "routines.update": { teamId: lead, routineId: "rtn_x", name: "n", prompt: "p", schedule: { kind: "interval", every: 1, unit: "hours" }, missed: "skip", overlap: "queue" },
    "routines.setPaused": { teamId: lead, routineId: "rtn_x", paused: true },
    "routines.runNow": { teamId: lead, routineId: "rtn_x" },
    "routines.delete": { teamId: lead, routineId: "rtn_x" },
    "memory.share": { teamId: lead, memoryId: "mem_x" },
    "memory.sharedEdit": { memoryId: "mem_x", text: "t", tags: ["a"] },
    "memory.sharedDelete": { memoryId: "mem_x" },
    "notifications.list": { before: "ntf_x" },
    "notifications.markRead": { ids: ["ntf_x"] },
    "notifications.settings": undefined,
    "notifications.setSettings": { muted: ["mention"] },
    "notifications.live": undefined,
    "people.list": { teamId: lead },
    "people.invites": { teamId: lead },
    "people.invite": { teamId: lead, role: "member", expiresInHours: 1, maxUses: 20 },
    "people.revokeInvite": { teamId: lead, inviteId: "inv_x" },
    "people.inviteInfo": { token: "inv_x" },
    "people.accept": { token: "inv_x" },
    "people.setRole": { teamId: lead, userId: "usr_x", role: "member" },
    "people.remove": { teamId: lead, userId: "usr_x" },
    "people.leave": { teamId: lead },
    "people.presence": { teamId: lead, clientId: "fuzz-tab-0002", watching: lead, typingTo: lead },
    "workspace.list": { teamId: lead, prefix: "docs", cursor: "a", limit: 5 },
    "workspace.live": { teamId: lead, lastEventId: null },
    "workspace.read": { teamId: lead, path: "docs/fuzz.md", version: 1 },
    "workspace.history": { teamId: lead, path: "docs/fuzz.md" },
    "workspace.search": { teamId: lead, query: "fuzz", regex: false, prefix: "docs", limit: 5 },
    "workspace.write": { teamId: lead, path: "docs/fuzz.md", content: "fuzzed", expectedVersion: 1 },
    "workspace.delete": { teamId: lead, path: "docs/fuzz.md", expectedVersion: 1 },
  };
}

const BIG_INTS = [2 ** 31, -(2 ** 31) - 1, 1e300, 1.5];

/** Each field of `base` broken in every way that applies to its value, one at a time. */
function* mutations(base: Input): Generator<{ what: string; input: Input }> {
  for (const [key, value] of Object.entries(base)) {
    const put = (what: string, v: unknown) => ({ what: `${key}: ${what}`, input: { ...base, [key]: v } });
    if (typeof value === "string") {
      yield put("NUL", `${value}\u0000`);
      yield put("lone surrogate", `\uD800${value}`);
      yield put("lone low surrogate", `${value}\uDFFF`);
      yield put("object", { a: 1 });
    }
    if (typeof value === "number") for (const n of BIG_INTS) yield put(String(n), n);
    if (Array.isArray(value)) yield put("NUL in array", [...value, "x\u0000"]);
    if (key === "teamId") yield put("a teammate's session id", mate);
    if (value === SOME_CURSOR) yield* cursorMutations(put);
  }
  yield { what: "NUL in an unknown field", input: { ...base, extra: "\u0000" } };
}

/** The largest valid value of each cursor position. */
const CURSOR_TOP = { s: 2 ** 31 - 1, m: 2 ** 31 - 1, a: Number.MAX_SAFE_INTEGER, w: 2 ** 31 - 1, t: 253_402_300_799_999 };

/** A timeline cursor with each of its positions broken: the numbers inside an opaque cursor reach SQL too. */
function* cursorMutations(put: (what: string, v: unknown) => { what: string; input: Input }) {
  const base = { s: { [lead]: 1 }, m: 0, a: 0, w: 0, t: 0 };
  for (const field of ["s", "m", "a", "w", "t"] as const) {
    for (const n of [...BIG_INTS, Number.MAX_SAFE_INTEGER, 2 ** 63]) {
      const broken = field === "s" ? { ...base, s: { [lead]: n } } : { ...base, [field]: n };
      // Positions that fit their column (an action id is a bigint, `t` a time) are valid cursors, not refusals.
      if (Number.isSafeInteger(n) && n >= 0 && n <= CURSOR_TOP[field]) continue;
      yield put(`cursor ${field} = ${n}`, Buffer.from(JSON.stringify(broken)).toString("base64url"));
    }
  }
}

/** Every table's rows (a digest): a refusal changes none of them. */
const counts = () => tableDigests(db);

interface Reply {
  status: number;
  body: string;
  error?: { message: string; data: { appCode?: string; stack?: unknown; httpStatus?: number } };
}

const typeOf = (path: string) => (appRouter._def.procedures as unknown as Record<string, { _def: { type: string } }>)[path]!._def.type;

/** One call as the browser's links make it: GET for queries and SSE, POST for mutations. */
async function callHttp(path: string, input: unknown, extra: Record<string, string> = {}): Promise<Reply> {
  const url = new URL(`${server.url}/api/trpc/${path}`);
  const type = typeOf(path);
  const encoded = superjson.stringify(input);
  const headers = { cookie, ...extra };
  let res: Response;
  if (type === "mutation") {
    res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", origin: server.url, ...headers }, body: encoded });
  } else {
    if (input !== undefined) url.searchParams.set("input", encoded);
    res = await fetch(url, { headers: type === "subscription" ? { accept: "text/event-stream", ...headers } : headers });
  }
  if (type === "subscription" && res.ok) {
    // A feed that started is not a refusal: read its first message, then hang up.
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const err = /event: serialized-error\ndata: (.*)/.exec(first);
    if (err) return { status: 200, body: first, error: superjson.parse(err[1]!) as Reply["error"] };
    return { status: res.status, body: first };
  }
  const body = await res.text();
  const parsed = JSON.parse(body) as { error?: { json: Reply["error"] } } | { error?: { json: Reply["error"] } }[];
  const one = Array.isArray(parsed) ? parsed[0] : parsed;
  return { status: res.status, body, error: one?.error?.json };
}

describe("every procedure over HTTP", () => {
  it("has a fuzz base input (new procedures must be added here)", () => {
    expect(Object.keys(baseInputs()).sort()).toEqual(Object.keys(appRouter._def.procedures).sort());
  });

  it("refuses hostile input with a typed 4xx, never a 5xx, and persists nothing", { timeout: 120_000 }, async () => {
    const failures: string[] = [];
    for (const [path, base] of Object.entries(baseInputs())) {
      if (!base) continue;
      for (const { what, input } of mutations(base)) {
        const before = await counts();
        const reply = await callHttp(path, input);
        const where = `${path} (${what})`;
        if (reply.status >= 500) failures.push(`${where}: HTTP ${reply.status} ${reply.body.slice(0, 200)}`);
        if (!reply.error) {
          failures.push(`${where}: accepted`);
          continue;
        }
        if (!reply.error.data.appCode) failures.push(`${where}: no appCode`);
        if (reply.error.data.stack !== undefined || /\/work\/|node_modules|at \w+ \(/.test(reply.body)) failures.push(`${where}: leaks a stack`);
        if (/NUL|surrogate/.test(what) && reply.error.data.appCode !== "INVALID_INPUT") {
          failures.push(`${where}: ${reply.error.data.appCode} instead of INVALID_INPUT`);
        }
        if (what.includes("teammate") && reply.error.data.appCode !== "TEAM_NOT_FOUND") failures.push(`${where}: ${reply.error.data.appCode}`);
        // The caller owns the team and the instance: the input is what must be refused.
        if (reply.error.data.appCode === "UNAUTHORIZED" || reply.error.data.appCode === "FORBIDDEN") {
          failures.push(`${where}: ${reply.error.data.appCode}, not an input refusal`);
        }
        const after = await counts();
        if (JSON.stringify(after) !== JSON.stringify(before)) failures.push(`${where}: rows changed ${JSON.stringify(before)} → ${JSON.stringify(after)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it("refuses hostile text in every auth body the pages send with a typed 400, persisting nothing", async () => {
    // Better Auth's routes under /api/auth, beside tRPC: the sign-in and sign-up forms, the
    // account page (profile, password, sessions) and the social sign-in route.
    const bodies: Record<string, Input> = {
      "/sign-in/email": { email: "ana@example.test", password: "correct horse battery" },
      "/sign-up/email": { name: "Eve", email: "eve@example.test", password: "correct horse battery", inviteToken: "inv_x" },
      "/update-user": { name: "Ana", image: "https://example.test/a.png" },
      "/change-password": { currentPassword: "correct horse battery", newPassword: "another horse battery", revokeOtherSessions: true },
      "/sign-in/social": { provider: "github", callbackURL: "/" },
    };
    // The library's rate limiter counts every request before any check: its rows may move.
    const counts = async () => ({ ...(await tableDigests(db)), auth_rate_limits: "counted" });
    const failures: string[] = [];
    for (const [path, base] of Object.entries(bodies)) {
      for (const { what, input } of mutations(base)) {
        if (!/NUL|surrogate/.test(what)) continue;
        const before = await counts();
        const res = await fetch(`${server.url}/api/auth${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", origin: server.url, cookie },
          body: JSON.stringify(input),
        });
        const body = await res.text();
        const where = `${path} (${what})`;
        if (res.status !== 400) failures.push(`${where}: HTTP ${res.status} ${body.slice(0, 200)}`);
        else if (!body.includes('"INVALID_INPUT"')) failures.push(`${where}: ${body.slice(0, 200)}`);
        const after = await counts();
        if (JSON.stringify(after) !== JSON.stringify(before)) failures.push(`${where}: rows changed`);
      }
    }
    expect(failures).toEqual([]);
  });

  it("refuses a request body over the limit with 413 before reading it all, persisting nothing", async () => {
    const before = await counts();
    const content = "x".repeat(3 * 1024 * 1024 + 1);
    const reply = await callHttp("workspace.write", { teamId: lead, path: "docs/huge.md", content, expectedVersion: 0 });
    expect(reply.status).toBe(413);
    expect(reply.error?.data.appCode).toBe("INVALID_INPUT");
    expect(await counts()).toEqual(before);
    // A file of the default limit fits: the body limit leaves room for the JSON around it.
    const fits = await callHttp("workspace.write", { teamId: lead, path: "docs/one-mib.md", content: "\"".repeat(1024 * 1024), expectedVersion: 0 });
    expect(fits.error).toBeUndefined();
  });

  it("refuses a Last-Event-ID header past its range or not of its feed's form", async () => {
    const cases: [string, Input, string][] = [
      ["session.live", { sessionId: lead }, "99999999999"],
      ["team.live", { teamId: lead }, "99999999999"],
      ["team.live", { teamId: lead }, "epoch.99999999999999999999"],
      ["workspace.live", { teamId: lead }, "99999999999"],
      ["workspace.live", { teamId: lead }, "seven"],
      ["timeline.live", { teamId: lead }, Buffer.from(JSON.stringify({ s: {}, m: 2 ** 31, a: 0, w: 0, t: 0 })).toString("base64url")],
    ];
    for (const [path, input, header] of cases) {
      const reply = await callHttp(path, input, { "last-event-id": header });
      expect(reply.status, `${path} ${header}`).toBeLessThan(500);
      expect(reply.error?.data.appCode, `${path} ${header}`).toBe("INVALID_INPUT");
    }
  });

  it("reads a timeline cursor at the top of every position's range", async () => {
    const top = Buffer.from(JSON.stringify({ ...CURSOR_TOP, s: { [lead]: CURSOR_TOP.s } })).toString("base64url");
    const page = await callHttp("timeline.page", { teamId: lead, before: top, limit: 5 });
    expect(page.status).toBe(200);
    const live = await callHttp("timeline.live", { teamId: lead, lastEventId: top });
    expect(live.error).toBeUndefined();
    expect(live.status).toBe(200);
  });

  it("refuses a batch larger than MAX_BATCH_SIZE with BATCH_TOO_LARGE, and runs none of it", async () => {
    const before = await counts();
    const n = MAX_BATCH_SIZE + 1;
    const paths = Array.from({ length: n }, () => "session.create").join(",");
    const body = Object.fromEntries(Array.from({ length: n }, (_, i) => [String(i), superjson.serialize({ title: `batch ${i}` })]));
    const res = await fetch(`${server.url}/api/trpc/${paths}?batch=1`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.url, cookie },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).toContain("BATCH_TOO_LARGE");
    expect(await counts()).toEqual(before);
    // The limit itself is fine.
    const ok = Array.from({ length: MAX_BATCH_SIZE }, () => "session.models").join(",");
    const input = Object.fromEntries(Array.from({ length: MAX_BATCH_SIZE }, (_, i) => [String(i), superjson.serialize(undefined)]));
    const okRes = await fetch(`${server.url}/api/trpc/${ok}?batch=1&input=${encodeURIComponent(JSON.stringify(input))}`, { headers: { cookie } });
    expect(okRes.status).toBe(200);
  });

  it("hides internal failures: a generic message, no stack, appCode INTERNAL", async () => {
    // Break the database under one procedure: the sessions table is renamed for a moment.
    await db.$executeRawUnsafe(`ALTER TABLE team_tasks RENAME TO team_tasks_away`);
    try {
      const reply = await callHttp("team.tasks", { teamId: lead });
      expect(reply.status).toBe(500);
      expect(reply.error?.data.appCode).toBe("INTERNAL");
      expect(reply.error?.message).not.toMatch(/team_tasks|prisma|relation/i);
      expect(reply.body).not.toMatch(/\/work\/|node_modules/);
    } finally {
      await db.$executeRawUnsafe(`ALTER TABLE team_tasks_away RENAME TO team_tasks`);
    }
  });
});
