import type { TRPCClientError } from "@trpc/client";
import { describe, expect } from "vitest";
import type { Db } from "../db/client";
import type { AppServer } from "../main";
import { tableDigests } from "../testing/db-snapshot";
import { appServerTest } from "../testing/app-tests";
import { httpClient, type HttpIdentity } from "../testing/http-client";
import { signUpOverHttp } from "../testing/people";
import { waitFor } from "../testing/runtime-harness";
import type { AppRouter } from "./root";

// The authorisation matrix's HTTP half (access.test.ts has every procedure in-process): API
// tokens through `Authorization: Bearer` on a real server, and the live feeds over real SSE for
// each kind of caller, including a member whose feeds must end the moment they are removed.

const it = appServerTest({ SCRIPTED_MODEL_DELAY_MS: "5" });

let server: AppServer;
let db: Db;
type Client = ReturnType<typeof httpClient>;
const as = (who: HttpIdentity): Client => httpClient(server.url, who);
let owner: Client;
let ownerCookie: { cookie: string };
let team: string;

it.beforeAll(async ({ server: s, db: d }) => {
  server = s;
  db = d;
  ownerCookie = { cookie: (await signUpOverHttp(server.url, { name: "Olga Owner" })).cookie };
  owner = as(ownerCookie);
  team = (await owner.session.create.mutate({ title: "HTTP access" })).id;
});

/** Someone who joined `team` by an invite link with `role`, signed in with a cookie. */
async function joined(name: string, role: "member" | "viewer") {
  const { token } = await owner.people.invite.mutate({ teamId: team, role });
  const person = await signUpOverHttp(server.url, { name, inviteToken: token });
  const client = as({ cookie: person.cookie });
  await client.people.accept.mutate({ token });
  const me = (await client.account.status.query()).me!;
  return { client, id: me.id };
}

type Failure = { code?: string; appCode?: string };
const failureOf = (e: unknown): Failure => (e as TRPCClientError<AppRouter>).data ?? { code: "none" };

/** The rejection's tRPC and app codes. */
async function refusal(p: Promise<unknown>): Promise<Failure> {
  return p.then(
    () => ({ code: "OK" }),
    (e: unknown) => failureOf(e),
  );
}

interface Feed {
  /** Resolves with the first message. */
  first: Promise<unknown>;
  /** Settles when the feed ends: its error's codes, or "complete". */
  ended: Promise<Failure | "complete">;
  close(): void;
}

/** An SSE subscription of the tRPC client, as promises. */
function feed(open: (handlers: { onData: (d: unknown) => void; onError: (e: unknown) => void; onComplete: () => void }) => { unsubscribe(): void }): Feed {
  let gotFirst!: (d: unknown) => void;
  let end!: (r: Failure | "complete") => void;
  const first = new Promise<unknown>((r) => (gotFirst = r));
  const ended = new Promise<Failure | "complete">((r) => (end = r));
  const sub = open({ onData: (d) => gotFirst(d), onError: (e) => end(failureOf(e)), onComplete: () => end("complete") });
  return { first, ended, close: () => sub.unsubscribe() };
}

const sessionFeed = (c: Client, sessionId: string) => feed((h) => c.session.live.subscribe({ sessionId, lastEventId: null }, h));
const teamFeed = (c: Client, teamId: string, clientId?: string) => feed((h) => c.team.live.subscribe({ teamId, lastEventId: null, clientId }, h));

/** A feed that must be refused: its end comes first, with no message. */
async function refusedFeed(f: Feed): Promise<Failure | "complete" | "message"> {
  const outcome = await Promise.race([f.ended, f.first.then(() => "message" as const)]);
  f.close();
  return outcome;
}

describe("API tokens over HTTP", () => {
  it("act as their owner (a query, a mutation with no Origin, live feeds) and, once revoked, as nobody", async () => {
    const created = await owner.account.createToken.mutate({ name: "ci script" });
    const script = as({ token: created.token });
    expect((await script.team.roster.query({ teamId: team })).map((m) => m.name)).toEqual(["lead"]);
    const item = await script.session.prompt.mutate({ sessionId: team, text: "from a script" });
    expect(item.source).toMatchObject({ kind: "human", name: "Olga Owner" });
    const live = sessionFeed(script, team);
    await live.first;
    live.close();
    const room = teamFeed(script, team);
    await room.first;
    room.close();
    // The list shows no secret: not the token, not its hash.
    const listed = JSON.stringify(await owner.account.tokens.query());
    expect(listed).toContain(created.prefix);
    expect(listed).not.toContain(created.token);
    expect(listed).not.toMatch(/tokenHash|token_hash/);

    await owner.account.revokeToken.mutate({ id: created.id });
    // Let the first turn settle, and its team events fan out (notifications are written after
    // the turn, by the dispatcher), so the tables below stand still.
    await waitFor(async () => (await owner.session.get.query({ sessionId: team })).session.status === "idle", 20_000, "the script's turn to end");
    await waitFor(async () => (await db.teamEvent.count({ where: { teamId: team, dispatchedAt: null } })) === 0 || null, 20_000, "the team's events dispatched");
    const before = await tableDigests(db, { except: ["sessions", "session_events", "api_tokens"] });
    expect(await refusal(script.team.roster.query({ teamId: team }))).toMatchObject({ code: "UNAUTHORIZED", appCode: "UNAUTHORIZED" });
    expect(await refusal(script.session.prompt.mutate({ sessionId: team, text: "after revoking" }))).toMatchObject({ code: "UNAUTHORIZED" });
    expect(await refusedFeed(sessionFeed(script, team))).toMatchObject({ code: "UNAUTHORIZED", appCode: "UNAUTHORIZED" });
    expect(await refusedFeed(teamFeed(script, team))).toMatchObject({ code: "UNAUTHORIZED", appCode: "UNAUTHORIZED" });
    expect(await tableDigests(db, { except: ["sessions", "session_events", "api_tokens"] })).toEqual(before);
    expect(await db.inboxItem.count({ where: { text: "after revoking" } })).toBe(0);
  });
});

describe("live feeds over SSE", () => {
  it("refuse the anonymous (UNAUTHORIZED) and a stranger (NOT_FOUND); a viewer watches; a teammate's id is no team id", async () => {
    const mate = await owner.team.addTeammate.mutate({ teamId: team, name: "watcher", description: "Watches", prompt: "Say hi" });
    const anonymous = as(null);
    expect(await refusedFeed(sessionFeed(anonymous, team))).toMatchObject({ code: "UNAUTHORIZED", appCode: "UNAUTHORIZED" });
    expect(await refusedFeed(teamFeed(anonymous, team))).toMatchObject({ code: "UNAUTHORIZED", appCode: "UNAUTHORIZED" });

    await owner.account.setOpenSignUp.mutate({ open: true });
    const stranger = as({ cookie: (await signUpOverHttp(server.url, { name: "Sam Stranger" })).cookie });
    await owner.account.setOpenSignUp.mutate({ open: false });
    expect(await refusedFeed(sessionFeed(stranger, team))).toMatchObject({ code: "NOT_FOUND", appCode: "SESSION_NOT_FOUND" });
    expect(await refusedFeed(sessionFeed(stranger, mate.sessionId))).toMatchObject({ code: "NOT_FOUND", appCode: "SESSION_NOT_FOUND" });
    expect(await refusedFeed(teamFeed(stranger, team))).toMatchObject({ code: "NOT_FOUND", appCode: "TEAM_NOT_FOUND" });

    const viewer = await joined("Vera Viewer", "viewer");
    for (const f of [sessionFeed(viewer.client, team), sessionFeed(viewer.client, mate.sessionId), teamFeed(viewer.client, team)]) {
      await f.first;
      f.close();
    }
    expect(await refusal(viewer.client.session.prompt.mutate({ sessionId: mate.sessionId, text: "hi" }))).toMatchObject({ code: "FORBIDDEN" });
    // The teammate's session is a session of the team, but no team id, even for its owner.
    expect(await refusedFeed(teamFeed(owner, mate.sessionId))).toMatchObject({ code: "NOT_FOUND", appCode: "TEAM_NOT_FOUND" });
    expect(await refusedFeed(teamFeed(viewer.client, mate.sessionId))).toMatchObject({ code: "NOT_FOUND", appCode: "TEAM_NOT_FOUND" });
  });

  it("end a member's open feeds with NOT_FOUND the moment they are removed", async () => {
    const member = await joined("Mo Member", "member");
    const clientId = "tab-removed-member";
    await member.client.people.presence.mutate({ teamId: team, clientId, watching: team, typingTo: null });
    const live = sessionFeed(member.client, team);
    const room = teamFeed(member.client, team, clientId);
    await Promise.all([live.first, room.first]);

    const removedAt = Date.now();
    await owner.people.remove.mutate({ teamId: team, userId: member.id });
    expect(await live.ended).toMatchObject({ code: "NOT_FOUND", appCode: "SESSION_NOT_FOUND" });
    expect(await room.ended).toMatchObject({ code: "NOT_FOUND", appCode: "TEAM_NOT_FOUND" });
    // Woken by the removal itself, not by the feeds' periodic re-read (every 5 s).
    expect(Date.now() - removedAt).toBeLessThan(4_000);
    live.close();
    room.close();
    // And every other door is shut too; the presence row went with the membership.
    expect(await refusal(member.client.team.roster.query({ teamId: team }))).toMatchObject({ code: "NOT_FOUND", appCode: "TEAM_NOT_FOUND" });
    expect(await refusal(member.client.session.prompt.mutate({ sessionId: team, text: "still here?" }))).toMatchObject({
      code: "NOT_FOUND",
      appCode: "SESSION_NOT_FOUND",
    });
    expect(await db.presence.count({ where: { userId: member.id } })).toBe(0);
    expect((await member.client.team.list.query()).map((t) => t.id)).not.toContain(team);
  });
});
