import { createHash } from "node:crypto";
import http from "node:http";
import { describe, expect } from "vitest";
import { createDb, type DatabaseUrls, type Db } from "../db/client";
import { parseEnv } from "../env";
import { LIMITS } from "../../shared/limits";
import { startAppServer, type AppServer } from "../main";
import { createTestDatabase } from "../testing/db";
import { databaseTest } from "../testing/fixtures";
import { httpClient } from "../testing/http-client";
import { sessionCookie, signUpOverHttp } from "../testing/people";

// Accounts over real HTTP (Better Auth under /api/auth on the app server): the fresh
// instance and its owner, who may sign up, display names, the sign-in rate limit shared by
// every server process on the database, signing out (here and everywhere), password change,
// cookie attributes under http and https, how passwords and API tokens are stored.

const serve = (database: DatabaseUrls, vars: Record<string, string> = {}) =>
  startAppServer({
    env: parseEnv({ PORT: "0", HOST: "127.0.0.1", AUTH_SIGN_IN_PER_MINUTE: "1000", ...vars }),
    database,
    pages: false,
    log: () => undefined,
  });

const it = databaseTest().extend("server", { scope: "file" }, async ({ tdb }, { onCleanup }) => {
  const server = await serve(tdb);
  onCleanup(() => server.close());
  return server;
});

let server: AppServer;
let db: Db;
/** What the fresh instance said before anyone signed up, and the first sign-up's answer. */
let fresh: { status: unknown; firstSignUp: Response; address: string };
let ownerCookie = "";

it.beforeAll(async ({ server: s, db: d }) => {
  server = s;
  db = d;
  const status = await httpClient(server.url, null).account.status.query();
  const address = email("owner");
  const first = await signUp({ name: "Otto Owner", email: address });
  fresh = { status, firstSignUp: first.res, address };
  ownerCookie = sessionCookie(first.res);
});

const PASSWORD = "correct horse battery";
let emails = 0;
const email = (who: string) => `${who}.${++emails}@example.test`;

/** A POST to /api/auth as the app's own page sends it (same Origin, the cookie if any). */
async function authPost(path: string, body: unknown, cookie?: string, base = server.url): Promise<{ status: number; json: Record<string, unknown>; res: Response }> {
  const res = await fetch(`${base}/api/auth${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: base, ...(cookie ? { cookie } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {}, res };
}

const signUp = (body: Record<string, unknown>) => authPost("/sign-up/email", { password: PASSWORD, ...body });
const signIn = (address: string, password = PASSWORD, base = server.url) => authPost("/sign-in/email", { email: address, password }, undefined, base);
/** Someone new, signed up while the owner holds sign-up open for a moment. */
async function newPerson(name: string, password = PASSWORD) {
  const owner = httpClient(server.url, { cookie: ownerCookie });
  await owner.account.setOpenSignUp.mutate({ open: true });
  try {
    return await signUpOverHttp(server.url, { name, email: email(name.toLowerCase()), password });
  } finally {
    await owner.account.setOpenSignUp.mutate({ open: false });
  }
}
const me = async (cookie: string) => (await httpClient(server.url, { cookie }).account.status.query()).me;

describe("a fresh instance", () => {
  it("has no owner; the first sign-up becomes the instance's owner", async () => {
    expect(fresh.status).toEqual({ hasOwner: false, openSignUp: false, me: null, sso: null });
    expect(fresh.firstSignUp.status).toBe(200);
    expect(await me(ownerCookie)).toMatchObject({ name: "Otto Owner", email: fresh.address, instanceOwner: true });
    expect(await httpClient(server.url, null).account.status.query()).toMatchObject({ hasOwner: true });
    expect(await db.user.count({ where: { instanceOwner: true } })).toBe(1);
  });
});

describe("a fresh instance, raced", () => {
  it("two first sign-ups at once: exactly one owner, the other refused without an account", async () => {
    const tdb = await createTestDatabase();
    const [one, two] = [await serve(tdb), await serve(tdb)];
    try {
      const [a, b] = await Promise.all(
        [one, two].map((s, i) =>
          fetch(`${s.url}/api/auth/sign-up/email`, {
            method: "POST",
            headers: { "content-type": "application/json", origin: s.url },
            body: JSON.stringify({ name: `First ${i}`, email: `first.${i}@example.test`, password: PASSWORD }),
          }),
        ),
      );
      // The later one either saw the owner (403 SIGN_UP_CLOSED) or met the unique index on
      // users.instance_owner (the library's 422): never a second owner.
      const statuses = [a!.status, b!.status].sort();
      const { withClient } = await import("../db/admin");
      const owners = await withClient(tdb.url, (c) => c.query<{ n: number }>("SELECT count(*)::int AS n FROM users WHERE instance_owner"));
      const users = await withClient(tdb.url, (c) => c.query<{ n: number }>("SELECT count(*)::int AS n FROM users"));
      expect(owners.rows[0]!.n).toBe(1);
      expect(users.rows[0]!.n).toBe(1);
      expect(statuses[0]).toBe(200);
      expect(statuses[1]).toBeGreaterThanOrEqual(400);
      expect(statuses[1]).toBeLessThan(500);
    } finally {
      await one.close();
      await two.close();
      await tdb.drop();
    }
  });
});

describe("sign-up", () => {
  it("is closed to someone without an invite: 403 SIGN_UP_CLOSED and no account", async () => {
    const address = email("uninvited");
    const refused = await signUp({ name: "Una Uninvited", email: address });
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ code: "SIGN_UP_CLOSED" });
    expect(refused.res.headers.getSetCookie()).toEqual([]);
    // A made-up invite token is no invite.
    expect((await signUp({ name: "Una Uninvited", email: address, inviteToken: "inv_made_up" })).status).toBe(403);
    expect(await db.user.count({ where: { email: address } })).toBe(0);
    expect(await db.authAccount.count({ where: { user: { email: address } } })).toBe(0);
  });

  it("is open to the holder of a valid invite link, and the link still joins them afterwards", async () => {
    const owner = httpClient(server.url, { cookie: ownerCookie });
    const team = await owner.session.create.mutate({ title: "Invited" });
    const { token } = await owner.people.invite.mutate({ teamId: team.id, role: "member" });
    const ivan = await signUpOverHttp(server.url, { name: "Ivan Invited", email: email("ivan"), inviteToken: token });
    // Signing up with the link joins the team: one link, one account.
    const ivanRow = await db.user.findUniqueOrThrow({ where: { email: ivan.email } });
    expect(await db.teamPerson.findUnique({ where: { teamId_userId: { teamId: team.id, userId: ivanRow.id } } })).toMatchObject({ role: "member" });
    const used = await signUp({ name: "Late", email: email("late"), inviteToken: token });
    expect(used.status).toBe(403);
    expect(await db.user.count({ where: { name: "Late" } })).toBe(0);
    // Accepting afterwards (what the invite page does) answers the role already held.
    const ivanClient = httpClient(server.url, { cookie: ivan.cookie });
    expect(await ivanClient.people.accept.mutate({ token })).toEqual({ teamId: team.id, role: "member" });
    expect((await me(ivan.cookie))?.instanceOwner).toBe(false);
    expect(await db.teamInviteUse.count({ where: { userId: ivanRow.id } })).toBe(1);
  });

  it("is open to as many holders of a reusable link as it allows", async () => {
    const owner = httpClient(server.url, { cookie: ownerCookie });
    const team = await owner.session.create.mutate({ title: "Class" });
    const { token } = await owner.people.invite.mutate({ teamId: team.id, role: "viewer", maxUses: 2 });
    const first = await signUpOverHttp(server.url, { name: "Pupil One", email: email("pupil"), inviteToken: token });
    const second = await signUpOverHttp(server.url, { name: "Pupil Two", email: email("pupil"), inviteToken: token });
    expect((await signUp({ name: "Pupil Three", email: email("pupil"), inviteToken: token })).status).toBe(403);
    for (const p of [first, second]) {
      const row = await db.user.findUniqueOrThrow({ where: { email: p.email } });
      expect(await db.teamPerson.findUnique({ where: { teamId_userId: { teamId: team.id, userId: row.id } } })).toMatchObject({ role: "viewer" });
    }
  });

  it("is open to anyone when the instance owner opens it; instanceOwner in the body makes nobody owner", async () => {
    const owner = httpClient(server.url, { cookie: ownerCookie });
    await owner.account.setOpenSignUp.mutate({ open: true });
    try {
      const address = email("mallory");
      // The field is not input: the library refuses the whole sign-up rather than ignore it.
      const sneaky = await signUp({ name: "Mallory", email: address, instanceOwner: true });
      expect(sneaky.status, JSON.stringify(sneaky.json)).toBe(400);
      expect(await db.user.count({ where: { email: address } })).toBe(0);
      expect(await db.user.count({ where: { instanceOwner: true } })).toBe(1);
      const honest = await signUp({ name: "Mallory", email: address });
      expect(honest.status).toBe(200);
      expect((await db.user.findUniqueOrThrow({ where: { email: address } })).instanceOwner).not.toBe(true);
      expect((await me(sessionCookie(honest.res)))?.instanceOwner).toBe(false);
      // And nobody but the instance's owner opens or closes sign-up.
      const mallory = httpClient(server.url, { cookie: sessionCookie(honest.res) });
      await expect(mallory.account.setOpenSignUp.mutate({ open: true })).rejects.toMatchObject({ data: { code: "FORBIDDEN" } });
    } finally {
      await owner.account.setOpenSignUp.mutate({ open: false });
    }
    expect((await signUp({ name: "After closing", email: email("after") })).status).toBe(403);
  });

  it("takes a display name of one line, 1–64 characters, trimmed", async () => {
    const owner = httpClient(server.url, { cookie: ownerCookie });
    await owner.account.setOpenSignUp.mutate({ open: true });
    try {
      for (const name of ["", "   ", "x".repeat(LIMITS.displayNameChars + 1), "Two\nlines", "Cr\rlf", "Tab\there", "Bell\u0007", "Line\u2028separator", "Para\u2029separator", "Next\u0085line"]) {
        const address = email("badname");
        const refused = await signUp({ name, email: address });
        expect(refused.status, JSON.stringify(name)).toBe(400);
        expect(refused.json, JSON.stringify(name)).toMatchObject({ code: "INVALID_DISPLAY_NAME" });
        expect(await db.user.count({ where: { email: address } })).toBe(0);
      }
      const address = email("goodname");
      const ok = await signUp({ name: `  ${"y".repeat(LIMITS.displayNameChars)}  `, email: address });
      expect(ok.status).toBe(200);
      expect((await db.user.findUniqueOrThrow({ where: { email: address } })).name).toBe("y".repeat(LIMITS.displayNameChars));
      // Characters, not UTF-16 units: 64 emoji (128 units) are a valid name, 65 are not.
      const emoji = "🦊".repeat(LIMITS.displayNameChars);
      const wide = email("emoji");
      expect((await signUp({ name: emoji, email: wide })).status).toBe(200);
      expect((await signUp({ name: `${emoji}🦊`, email: email("emoji-long") })).status).toBe(400);
      // A rename follows the same rule.
      const cookie = sessionCookie(ok.res);
      expect((await authPost("/update-user", { name: "Re\nnamed" }, cookie)).status).toBe(400);
      expect((await authPost("/update-user", { name: "  Renamed  " }, cookie)).status).toBe(200);
      expect((await me(cookie))?.name).toBe("Renamed");
    } finally {
      await owner.account.setOpenSignUp.mutate({ open: false });
    }
  });
});

describe("what the auth library stores", () => {
  it("bounds every field a request sets: image URLs are http(s) and at most 2 KiB, bodies at most 64 KiB, user agents cut", async () => {
    const person = await newPerson("Ima");
    const stored = () => db.user.findUniqueOrThrow({ where: { email: person.email }, select: { image: true } });
    for (const image of [`https://example.test/${"x".repeat(LIMITS.imageUrlChars)}`, "data:image/png;base64,AAAA", "javascript:alert(1)", "not a url", 42]) {
      const refused = await authPost("/update-user", { image }, person.cookie);
      expect(refused.status, String(image).slice(0, 40)).toBe(400);
      expect(refused.json, String(image).slice(0, 40)).toMatchObject({ code: "INVALID_IMAGE_URL" });
    }
    expect((await stored()).image).toBeNull();
    const ok = `https://example.test/${"x".repeat(LIMITS.imageUrlChars - 21)}`;
    expect((await authPost("/update-user", { image: ok }, person.cookie)).status).toBe(200);
    expect((await stored()).image).toBe(ok);

    // A body past the limit is refused before the library reads it (8 MB as the attack sent).
    const huge = await authPost("/update-user", { image: `https://example.test/${"x".repeat(8 * 1024 * 1024)}` }, person.cookie);
    expect(huge.status).toBe(413);
    expect((await stored()).image).toBe(ok);
    expect((await authPost("/sign-up/email", { name: "x".repeat(LIMITS.authBodyBytes), email: email("big"), password: PASSWORD })).status).toBe(413);

    const longEmail = `${"e".repeat(LIMITS.emailChars)}@example.test`;
    expect((await signUp({ name: "Long", email: longEmail })).json).toMatchObject({ code: "INVALID_EMAIL" });
    expect(await db.user.count({ where: { email: longEmail } })).toBe(0);

    const agent = "A".repeat(8 * 1024);
    const res = await fetch(`${server.url}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.url, "user-agent": agent },
      body: JSON.stringify({ email: person.email, password: PASSWORD }),
    });
    expect(res.status).toBe(200);
    const sessions = await db.authSession.findMany({ where: { user: { email: person.email } }, select: { userAgent: true } });
    expect(sessions.map((s) => s.userAgent?.length ?? 0).sort((a, b) => b - a)[0]).toBe(LIMITS.userAgentChars);
  });
});

describe("passwords and sessions", () => {
  it("stores the password hashed by the library (scrypt salt:key), never as typed", async () => {
    const row = await db.authAccount.findFirstOrThrow({ where: { user: { name: "Otto Owner" }, providerId: "credential" } });
    expect(row.password).not.toBeNull();
    expect(row.password).not.toContain(PASSWORD);
    expect(row.password).toMatch(/^[0-9a-f]{32}:[0-9a-f]{128}$/);
    // Each hash has its own salt: the same password hashes differently for someone else.
    const other = await newPerson("Salt");
    const theirs = await db.authAccount.findFirstOrThrow({ where: { user: { email: other.email }, providerId: "credential" } });
    expect(theirs.password).toMatch(/^[0-9a-f]{32}:[0-9a-f]{128}$/);
    expect(theirs.password).not.toBe(row.password);
  });

  it("signs out: the cookie's session ends (its database row too), others stay", async () => {
    const address = (await db.user.findFirstOrThrow({ where: { name: "Otto Owner" } })).email;
    const a = sessionCookie((await signIn(address)).res);
    const b = sessionCookie((await signIn(address)).res);
    expect((await me(a))?.email).toBe(address);
    const sessionsBefore = await db.authSession.count();
    expect((await authPost("/sign-out", {}, a)).status).toBe(200);
    expect(await me(a)).toBeNull();
    expect((await me(b))?.email).toBe(address);
    expect(await db.authSession.count()).toBe(sessionsBefore - 1);
  });

  it("signs out everywhere: every session of the person ends", async () => {
    const address = (await newPerson("Evan")).email;
    const a = sessionCookie((await signIn(address)).res);
    const b = sessionCookie((await signIn(address)).res);
    expect((await authPost("/revoke-sessions", {}, a)).status).toBe(200);
    expect(await me(a)).toBeNull();
    expect(await me(b)).toBeNull();
    expect(await db.authSession.count({ where: { user: { email: address } } })).toBe(0);
    // The owner's sessions are someone else's: untouched.
    expect(await me(ownerCookie)).not.toBeNull();
  });

  it("changes the password: the old one fails after, other sessions end with revokeOtherSessions", async () => {
    const pat = await newPerson("Pat");
    const address = pat.email;
    const other = sessionCookie((await signIn(address)).res);

    const wrong = await authPost("/change-password", { currentPassword: "not the password", newPassword: "a new passphrase" }, pat.cookie);
    expect(wrong.status).toBeGreaterThanOrEqual(400);
    expect((await signIn(address)).status).toBe(200);

    const changed = await authPost("/change-password", { currentPassword: PASSWORD, newPassword: "a new passphrase", revokeOtherSessions: true }, pat.cookie);
    expect(changed.status).toBe(200);
    expect(changed.json).not.toHaveProperty("token");
    expect(await me(other)).toBeNull();
    // The session that changed it goes on (with the cookie the answer set).
    const renewed = sessionCookie(changed.res) || pat.cookie;
    expect((await me(renewed))?.email).toBe(address);
    const old = await signIn(address);
    expect(old.status).toBe(401);
    expect(old.res.headers.getSetCookie()).toEqual([]);
    expect((await signIn(address, "a new passphrase")).status).toBe(200);
  });

  it("sets the session cookie HttpOnly and SameSite=Lax, without Secure over http", async () => {
    const { res, json: body } = await signIn((await db.user.findFirstOrThrow({ where: { name: "Otto Owner" } })).email);
    const session = res.headers.getSetCookie().find((c) => /session_token=/.test(c));
    expect(session).toBeDefined();
    expect(session).toMatch(/;\s*HttpOnly/i);
    expect(session).toMatch(/;\s*SameSite=Lax/i);
    expect(session).not.toMatch(/;\s*Secure/i);
    // Only the HttpOnly cookie carries the session token: the JSON answer a page reads does not.
    expect(body.user).toBeDefined();
    expect(body).not.toHaveProperty("token");
    expect(JSON.stringify(body)).not.toContain(decodeURIComponent(/session_token=([^.;]+)/.exec(session!)![1]!));
  });

  it("never hands the session token to page script: get-session has none, listing sessions is off", async () => {
    const { res } = await signIn((await db.user.findFirstOrThrow({ where: { name: "Otto Owner" } })).email);
    const cookie = sessionCookie(res);
    const token = decodeURIComponent(/session_token=([^.;]+)/.exec(cookie)![1]!);
    const got = await fetch(`${server.url}/api/auth/get-session`, { headers: { cookie } });
    expect(got.status).toBe(200);
    const body = await got.text();
    expect(JSON.parse(body)).toMatchObject({ user: { name: "Otto Owner" }, session: { userId: expect.any(String) } });
    expect(body).not.toContain(token);
    expect((await fetch(`${server.url}/api/auth/list-sessions`, { headers: { cookie } })).status).toBe(404);
    const revokeOne = await fetch(`${server.url}/api/auth/revoke-session`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.url, cookie },
      body: JSON.stringify({ token }),
    });
    expect(revokeOne.status).toBe(404);
  });

  it("sets it Secure when APP_URL is https", async ({ tdb }) => {
    const secure = await serve(tdb, { APP_URL: "https://teams.example.test" });
    try {
      const { port } = new URL(secure.url);
      const body = JSON.stringify({ email: (await db.user.findFirstOrThrow({ where: { name: "Otto Owner" } })).email, password: PASSWORD });
      // fetch() sends its own Host; node:http lets the request name APP_URL's host.
      const setCookie = await new Promise<string[]>((resolve, reject) => {
        const req = http.request(
          {
            host: "127.0.0.1",
            port,
            method: "POST",
            path: "/api/auth/sign-in/email",
            headers: { host: "teams.example.test", origin: "https://teams.example.test", "content-type": "application/json" },
          },
          (res) => {
            res.resume();
            res.on("end", () => (res.statusCode === 200 ? resolve(res.headers["set-cookie"] ?? []) : reject(new Error(`HTTP ${res.statusCode}`))));
          },
        );
        req.on("error", reject);
        req.end(body);
      });
      const session = setCookie.find((c) => /session_token=/.test(c));
      expect(session).toMatch(/^__Secure-/);
      expect(session).toMatch(/;\s*Secure/i);
      expect(session).toMatch(/;\s*HttpOnly/i);
      expect(session).toMatch(/;\s*SameSite=Lax/i);
    } finally {
      await secure.close();
    }
  });
});

describe("the sign-in rate limit", () => {
  it("refuses the attempt past AUTH_SIGN_IN_PER_MINUTE with 429, counted in the database for every server process", async () => {
    const tdb = await createTestDatabase();
    const [one, two] = [await serve(tdb, { AUTH_SIGN_IN_PER_MINUTE: "3" }), await serve(tdb, { AUTH_SIGN_IN_PER_MINUTE: "3" })];
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await signIn("nobody@example.test", "wrong password", one.url)).status);
      expect(statuses.every((s) => s !== 429)).toBe(true);
      expect((await signIn("nobody@example.test", "wrong password", one.url)).status).toBe(429);
      // Another process on the same database counts the same attempts.
      expect((await signIn("nobody@example.test", "wrong password", two.url)).status).toBe(429);
      // The address is the socket's: a header claiming another one changes nothing.
      const spoofed = await fetch(`${one.url}/api/auth/sign-in/email`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          origin: one.url,
          "x-agent-teams-client-ip": "10.1.2.3",
          "x-forwarded-for": "10.1.2.4",
          "x-real-ip": "10.1.2.5",
        },
        body: JSON.stringify({ email: "nobody@example.test", password: "wrong password" }),
      });
      expect(spoofed.status).toBe(429);
      const { withClient } = await import("../db/admin");
      const rows = await withClient(tdb.url, (c) => c.query<{ key: string; count: number }>("SELECT key, count FROM auth_rate_limits"));
      expect(rows.rows.find((r) => r.key.includes("sign-in"))?.count).toBeGreaterThanOrEqual(3);
    } finally {
      await one.close();
      await two.close();
      await tdb.drop();
    }
  });
});

describe("the sign-in rate limit behind a trusted proxy (TRUST_PROXY)", () => {
  it("counts per client, by the address the proxy appended, not per proxy", async () => {
    const tdb = await createTestDatabase();
    const proxied = await serve(tdb, { AUTH_SIGN_IN_PER_MINUTE: "2", TRUST_PROXY: "true" });
    const attempt = (forwardedFor: string) =>
      fetch(`${proxied.url}/api/auth/sign-in/email`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: proxied.url, "x-forwarded-for": forwardedFor },
        body: JSON.stringify({ email: "nobody@example.test", password: "wrong password" }),
      }).then((r) => r.status);
    try {
      // Client A (a spoofed first entry is A's own word, and ignored) uses up its limit…
      expect(await attempt("1.1.1.1, 198.51.100.1")).not.toBe(429);
      expect(await attempt("2.2.2.2, 198.51.100.1")).not.toBe(429);
      expect(await attempt("3.3.3.3, 198.51.100.1")).toBe(429);
      // …while client B behind the same proxy still may try.
      expect(await attempt("198.51.100.2")).not.toBe(429);
    } finally {
      await proxied.close();
      await tdb.drop();
    }
  });
});

describe("the sign-in limit per account", () => {
  it("slows an attack spread over many addresses, while the owner may still sign in from an address they used before", async () => {
    const tdb = await createTestDatabase();
    const proxied = await serve(tdb, { TRUST_PROXY: "true" });
    const attempt = (from: string, email: string, password: string) =>
      fetch(`${proxied.url}/api/auth/sign-in/email`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: proxied.url, "x-forwarded-for": from },
        body: JSON.stringify({ email, password }),
      });
    try {
      const owner = await signUpOverHttp(proxied.url, { name: "Olga", password: PASSWORD });
      // The owner signs in from home once.
      expect((await attempt("198.51.100.7", owner.email, PASSWORD)).status).toBe(200);
      // An attacker tries the account from a new address each time: a few free attempts…
      for (let i = 0; i < LIMITS.signInFreeAttempts; i++) expect((await attempt(`203.0.113.${i + 1}`, owner.email, "guess")).status).toBe(401);
      // The first wait is one second; the checks below, on a loaded machine, take longer than
      // that, so they run in a later step of the backoff (a minute).
      const throttle = createDb(tdb, 1);
      const [step] = await throttle.$queryRaw<{ s: number }[]>`SELECT extract(epoch FROM next_attempt_at - now())::float8 AS s FROM sign_in_throttle`;
      expect(step!.s).toBeLessThanOrEqual(1);
      await throttle.$executeRaw`UPDATE sign_in_throttle SET next_attempt_at = now() + interval '1 minute'`;
      await throttle.$disconnect();
      // …then every further one waits, even with the right password, from any new address.
      const slowed = await attempt("203.0.113.100", owner.email, PASSWORD);
      expect(slowed.status).toBe(429);
      expect(Number(slowed.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(await slowed.json()).toMatchObject({ code: "SIGN_IN_DELAYED" });
      // Other accounts are not slowed; the account's case does not matter.
      expect((await attempt("203.0.113.101", "someone.else@example.test", "guess")).status).toBe(401);
      expect((await attempt("203.0.113.102", owner.email.toUpperCase(), "guess")).status).toBe(429);
      // The owner, from home, is not locked out, and a success clears the count.
      expect((await attempt("198.51.100.7", owner.email, PASSWORD)).status).toBe(200);
      expect((await attempt("203.0.113.103", owner.email, PASSWORD)).status).toBe(200);
      // Only the person's own successes make an address known (sign-up's too).
      const client = createDb(tdb, 1);
      const known = (await client.signInAddress.findMany({ select: { address: true } })).map((a) => a.address);
      await client.$disconnect();
      expect(known.sort()).toEqual(["127.0.0.1", "198.51.100.7", "203.0.113.103"]);
    } finally {
      await proxied.close();
      await tdb.drop();
    }
  });
});

describe("API tokens", () => {
  it("are shown once, stored as a sha256, act through Bearer, and stop when revoked", async () => {
    const owner = httpClient(server.url, { cookie: ownerCookie });
    const created = await owner.account.createToken.mutate({ name: "deploy" });
    expect(created.token).toMatch(/^at_/);
    expect(created.token.startsWith(created.prefix)).toBe(true);
    const listed = await owner.account.tokens.query();
    expect(listed.find((t) => t.id === created.id)).toEqual({ id: created.id, name: "deploy", prefix: created.prefix, createdAt: expect.any(Date), lastUsedAt: null });
    expect(JSON.stringify(listed)).not.toContain(created.token);
    const row = await db.apiToken.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.tokenHash).toBe(createHash("sha256").update(created.token).digest("hex"));
    expect(JSON.stringify(row)).not.toContain(created.token);

    const script = httpClient(server.url, { token: created.token });
    expect((await script.account.status.query()).me).toMatchObject({ name: "Otto Owner" });
    expect((await db.apiToken.findUniqueOrThrow({ where: { id: created.id } })).lastUsedAt).toBeInstanceOf(Date);
    // Someone else cannot revoke it.
    const other = await newPerson("Ira");
    await expect(httpClient(server.url, { cookie: other.cookie }).account.revokeToken.mutate({ id: created.id })).rejects.toMatchObject({
      data: { code: "NOT_FOUND", appCode: "API_TOKEN_NOT_FOUND" },
    });
    expect(await db.apiToken.count({ where: { id: created.id } })).toBe(1);

    await owner.account.revokeToken.mutate({ id: created.id });
    await expect(script.team.list.query()).rejects.toMatchObject({ data: { code: "UNAUTHORIZED", appCode: "UNAUTHORIZED" } });
    expect((await script.account.status.query()).me).toBeNull();
  });

  it("sign-ins go to the audit log: the person and address on success, the email tried on failure", async () => {
    const who = await newPerson("Audra");
    expect((await signIn(who.email, "wrong password entirely")).status).toBe(401);
    expect((await signIn(who.email)).status).toBe(200);
    const rows = await db.auditEntry.findMany({ where: { kind: { in: ["signed_in", "sign_in_failed"] }, actorName: { in: ["Audra", who.email] } }, orderBy: { id: "asc" } });
    const me = await db.user.findFirstOrThrow({ where: { email: who.email } });
    // The sign-up's own session, the failure, then the sign-in.
    expect(rows.map((r) => [r.kind, r.actorId, r.actorName])).toEqual([
      ["signed_in", me.id, "Audra"],
      ["sign_in_failed", null, who.email],
      ["signed_in", me.id, "Audra"],
    ]);
    expect(rows.every((r) => typeof r.ip === "string" && r.ip.length > 0)).toBe(true);
  });
});
