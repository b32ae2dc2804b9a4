import superjson from "superjson";
import { describe, expect } from "vitest";
import { parseEnv } from "../env";
import { startAppServer, type AppServer } from "../main";
import { databaseTest } from "../testing/fixtures";
import { httpClient } from "../testing/http-client";
import { signUpOverHttp } from "../testing/people";

// A credential that ends (an API token revoked, a sign-out everywhere) ends the person's open
// live feeds at once on every app process: the tables' trigger notifies, each feed re-checks.
// Two app servers on one database, each with its own LISTEN connection: the revocation goes
// through one, the feeds are open on the other. Without the push a feed would notice only at
// its next periodic re-check (15 s for a session feed, 30 s for a team feed); the waits below
// are far shorter than that.

const PUSHED_WITHIN_MS = 5_000;

const it = databaseTest().extend("servers", { scope: "file" }, async ({ tdb }, { onCleanup }) => {
  const start = () => startAppServer({ env: parseEnv({ PORT: "0", HOST: "127.0.0.1" }), database: tdb, pages: false, log: () => undefined });
  const servers = [await start(), await start()] as const;
  onCleanup(async () => {
    for (const s of servers) await s.close();
  });
  return servers;
});

// The instance's owner lets anyone sign up: each test signs up its own person.
it.beforeAll(async ({ servers: [a] }) => {
  const owner = await signUpOverHttp(a.url, { name: "Owner" });
  await httpClient(a.url, { cookie: owner.cookie }).account.setOpenSignUp.mutate({ open: true });
});

/** An open feed on `server`: settles with the app code that ended it (or "closed"). */
async function openFeed(server: AppServer, path: string, input: unknown, auth: Record<string, string>): Promise<{ ended: Promise<string> }> {
  const res = await fetch(`${server.url}/api/trpc/${path}?input=${encodeURIComponent(superjson.stringify(input))}`, {
    headers: { accept: "text/event-stream", ...auth },
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  // The feed is open once its first message came (it has checked access and read its state).
  while (!/event: message|^data: /m.test(text.replace(/event: connected\ndata: .*\n/, ""))) {
    const chunk = await reader.read();
    if (chunk.done) throw new Error(`${path} closed before its first message: ${text}`);
    text += decoder.decode(chunk.value);
  }
  const ended = (async () => {
    for (;;) {
      const match = /event: serialized-error\ndata: (.*)/.exec(text);
      if (match) {
        await reader.cancel();
        return (superjson.parse(match[1]!) as { data: { appCode: string } }).data.appCode;
      }
      const chunk = await reader.read();
      if (chunk.done) return "closed";
      text += decoder.decode(chunk.value);
    }
  })();
  return { ended };
}

const within = <T,>(p: Promise<T>, ms: number, what: string) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} still open after ${ms} ms`)), ms))]);

describe("ending a credential", () => {
  it("a revoked API token ends the feeds it opened, on another process, at once", async ({ servers: [a, b] }) => {
    const ana = await signUpOverHttp(a.url, { name: "Ana" });
    const browser = httpClient(a.url, { cookie: ana.cookie });
    const team = await browser.session.create.mutate({ title: "revoked token" });
    const { token, id } = await browser.account.createToken.mutate({ name: "script" });
    const auth = { authorization: `Bearer ${token}` };
    const feeds = [
      await openFeed(b, "session.live", { sessionId: team.id, lastEventId: null }, auth),
      await openFeed(b, "team.live", { teamId: team.id, lastEventId: null }, auth),
      await openFeed(b, "timeline.live", { teamId: team.id, lastEventId: null }, auth),
    ];
    // A feed of the same person by cookie stays open.
    const cookieFeed = await openFeed(b, "team.live", { teamId: team.id, lastEventId: null }, { cookie: ana.cookie });

    await browser.account.revokeToken.mutate({ id });
    const codes = await within(Promise.all(feeds.map((f) => f.ended)), PUSHED_WITHIN_MS, "a token's feed");
    expect(codes).toEqual(["UNAUTHORIZED", "UNAUTHORIZED", "UNAUTHORIZED"]);
    const stillOpen = await Promise.race([cookieFeed.ended, new Promise((r) => setTimeout(() => r("open"), 300))]);
    expect(stillOpen).toBe("open");
  });

  it("signing out everywhere ends every browser's feeds and the person's API tokens", async ({ servers: [a, b] }) => {
    const bo = await signUpOverHttp(a.url, { name: "Bo" });
    const browser = httpClient(a.url, { cookie: bo.cookie });
    const team = await browser.session.create.mutate({ title: "everywhere" });
    const { token } = await browser.account.createToken.mutate({ name: "script" });
    const feeds = [
      await openFeed(b, "team.live", { teamId: team.id, lastEventId: null }, { cookie: bo.cookie }),
      await openFeed(b, "session.live", { sessionId: team.id, lastEventId: null }, { authorization: `Bearer ${token}` }),
    ];

    const res = await fetch(`${a.url}/api/auth/revoke-sessions`, { method: "POST", headers: { cookie: bo.cookie, origin: a.url, "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(200);
    expect(await within(Promise.all(feeds.map((f) => f.ended)), PUSHED_WITHIN_MS, "a signed-out feed")).toEqual(["UNAUTHORIZED", "UNAUTHORIZED"]);
    // The token ended with the sessions: a script holding it is signed out too.
    const script = await fetch(`${b.url}/api/trpc/team.list?input=${encodeURIComponent(superjson.stringify({}))}`, { headers: { authorization: `Bearer ${token}` } });
    expect(script.status).toBe(401);
  });
});
