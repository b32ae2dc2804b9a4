import http, { IncomingMessage } from "node:http";
import { Socket } from "node:net";
import superjson from "superjson";
import { describe, expect, it as plainIt } from "vitest";
import type { Db } from "../db/client";
import { parseEnv } from "../env";
import { startAppServer, type AppServer } from "../main";
import { tableDigests } from "../testing/db-snapshot";
import { appServerTest } from "../testing/app-tests";
import { signUpOverHttp } from "../testing/people";
import { checkRequest, clientAddress, contentSecurityPolicy, newNonce, webPolicy, type WebPolicy } from "./security";

// The web layer's locks (docs/SPEC.md §13 Web security) over real HTTP, with node:http so a
// request can name any Host: unknown hosts, cross-site and header-less state changes are
// refused before anything runs and persist nothing, and every response carries the security
// headers. Then the policy's pure functions. Pages (pages: true needs a `next build`) are
// checked by the Playwright suite.

const it = appServerTest();

let server: AppServer;
let db: Db;
let port: string;
let cookie: string;
let token: string;

it.beforeAll(async ({ server: s, db: d }) => {
  server = s;
  db = d;
  port = new URL(server.url).port;
  cookie = (await signUpOverHttp(server.url, { name: "Sid" })).cookie;
  const res = await trpcPost("account.createToken", { name: "script" }, { cookie, origin: server.url });
  token = (superjson.deserialize((JSON.parse(res.body) as { result: { data: Parameters<typeof superjson.deserialize>[0] } }).result.data) as { token: string }).token;
});

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request as written: the Host header is the caller's (or none with `host: null`). */
function raw(opts: { method?: string; path: string; headers?: Record<string, string>; host?: string | null; body?: string }): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.host !== null) headers.host = opts.host ?? `127.0.0.1:${port}`;
    const req = http.request({ host: "127.0.0.1", port, method: opts.method ?? "GET", path: opts.path, headers, setHost: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(opts.body);
  });
}

const trpcPost = (path: string, input: unknown, headers: Record<string, string> = {}, host?: string) =>
  raw({ method: "POST", path: `/api/trpc/${path}`, headers: { "content-type": "application/json", ...headers }, body: superjson.stringify(input), host });

const signUpPost = (headers: Record<string, string>, host?: string) =>
  raw({
    method: "POST",
    path: "/api/auth/sign-up/email",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ name: "Eve", email: "eve@example.test", password: "correct horse battery" }),
    host,
  });

const codeOf = (r: Raw) => (JSON.parse(r.body) as { error?: { code?: string } }).error?.code;

function expectSecurityHeaders(r: Raw, what: string) {
  const csp = String(r.headers["content-security-policy"] ?? "");
  expect(csp, what).toMatch(/frame-ancestors 'none'/);
  expect(csp, what).toMatch(/default-src 'self'/);
  expect(r.headers["x-frame-options"], what).toBe("DENY");
  expect(r.headers["x-content-type-options"], what).toBe("nosniff");
  expect(r.headers["referrer-policy"], what).toBe("same-origin");
}

describe("the host allow-list (DNS rebinding)", () => {
  it("refuses an unknown Host with 421 before anything runs", async () => {
    const before = await tableDigests(db);
    for (const host of ["evil.example", `evil.example:${port}`, "localhost:1", `127.0.0.2:${port}`, `localhost.evil.example:${port}`]) {
      const create = await trpcPost("session.create", { title: "rebound" }, { cookie, origin: `http://${host}` }, host);
      expect(create.status, host).toBe(421);
      expect(codeOf(create), host).toBe("UNKNOWN_HOST");
      expectSecurityHeaders(create, host);
      const read = await raw({ path: "/api/trpc/team.list", headers: { cookie }, host });
      expect(read.status, host).toBe(421);
      expect(read.body).not.toContain("result");
      expect((await signUpPost({ origin: `http://${host}` }, host)).status, host).toBe(421);
    }
    // No Host at all (HTTP/1.1 requires one): refused as well, by Node or by the policy.
    expect([400, 421]).toContain((await raw({ path: "/api/trpc/team.list", headers: { cookie }, host: null })).status);
    expect(await tableDigests(db)).toEqual(before);
  });

  it("refuses a request line in absolute form like an unknown host, never redirecting to the host it names", async () => {
    for (const path of ["http://evil.example/", "http://evil.example/api/trpc/team.list", `http://127.0.0.1:${port}/`, "*"]) {
      const r = await raw({ path, headers: { cookie } });
      expect(r.status, path).toBe(421);
      expect(r.headers.location, path).toBeUndefined();
    }
  });

  it("answers a person's browser with a page naming APP_URL, and API clients with JSON", async () => {
    const page = await raw({ path: "/teams/x", host: "agents.example.com" });
    expect(page.status).toBe(421);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    expect(page.body).toContain("APP_URL");
    // The Host a client sent is never written into the page.
    const injected = await raw({ path: "/", host: "<script>x</script>" });
    expect(injected.body).not.toContain("<script>");
    const api = await raw({ path: "/api/trpc/team.list", host: "agents.example.com" });
    expect(api.headers["content-type"]).toMatch(/^application\/json/);
    expect(codeOf(api)).toBe("UNKNOWN_HOST");
  });

  it("serves the loopback names of its port when APP_URL is unset", async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `LOCALHOST:${port}`]) {
      const read = await raw({ path: "/api/trpc/account.status", headers: { cookie }, host });
      expect(read.status, host).toBe(200);
    }
  });
});

describe("state-changing requests", () => {
  it("are refused from another origin (403 CROSS_SITE_REQUEST) and persist nothing", async () => {
    const before = await tableDigests(db);
    const refusals = [
      await trpcPost("session.create", { title: "csrf" }, { cookie, origin: "https://evil.example" }),
      await trpcPost("session.create", { title: "csrf" }, { cookie, origin: "null" }),
      await trpcPost("session.create", { title: "csrf" }, { cookie, origin: `http://127.0.0.1:${port}.evil.example` }),
      await trpcPost("session.create", { title: "csrf" }, { cookie, "sec-fetch-site": "cross-site" }),
      await trpcPost("session.create", { title: "csrf" }, { cookie, "sec-fetch-site": "same-site" }),
      // A same-origin fetch metadata header does not excuse a foreign Origin.
      await trpcPost("session.create", { title: "csrf" }, { cookie, "sec-fetch-site": "same-origin", origin: "https://evil.example" }),
      await trpcPost("session.create", { title: "csrf" }, { cookie, "sec-fetch-site": "cross-site", origin: server.url }),
      await signUpPost({ origin: "https://evil.example" }),
      await signUpPost({ "sec-fetch-site": "cross-site" }),
      await raw({ method: "POST", path: "/api/auth/sign-out", headers: { cookie, origin: "https://evil.example" } }),
    ];
    for (const [i, r] of refusals.entries()) {
      expect(r.status, String(i)).toBe(403);
      expect(codeOf(r), String(i)).toBe("CROSS_SITE_REQUEST");
      expectSecurityHeaders(r, String(i));
    }
    expect(await tableDigests(db)).toEqual(before);
    // The cookie still works: the refused sign-out did not run.
    expect((await raw({ path: "/api/trpc/account.status", headers: { cookie } })).body).toContain("Sid");
  });

  it("are refused with neither Origin nor Sec-Fetch-Site unless they carry an API token", async () => {
    const before = await tableDigests(db);
    const bare = await trpcPost("session.create", { title: "no headers" }, { cookie });
    expect(bare.status).toBe(403);
    expect(codeOf(bare)).toBe("CROSS_SITE_REQUEST");
    expect((await signUpPost({})).status).toBe(403);
    // A Bearer header lets the request past the origin check, but then it is the token that
    // speaks: a junk token beside the cookie is nobody, the cookie is not consulted.
    const junk = await trpcPost("session.create", { title: "junk token" }, { cookie, authorization: "Bearer at_junk" });
    expect(junk.status).toBe(401);
    expect(await tableDigests(db)).toEqual(before);

    const scripted = await trpcPost("session.create", { title: "from a script" }, { authorization: `Bearer ${token}` });
    expect(scripted.status).toBe(200);
    expectSecurityHeaders(scripted, "bearer");
    expect(await db.session.count({ where: { title: "from a script" } })).toBe(1);
  });

  it("are accepted from the app's own origin", async () => {
    const byOrigin = await trpcPost("session.create", { title: "same origin" }, { cookie, origin: server.url });
    expect(byOrigin.status).toBe(200);
    const byFetchMetadata = await trpcPost("session.create", { title: "same origin" }, { cookie, "sec-fetch-site": "same-origin" });
    expect(byFetchMetadata.status).toBe(200);
    const both = await trpcPost("session.create", { title: "same origin" }, { cookie, "sec-fetch-site": "same-origin", origin: server.url });
    expect(both.status).toBe(200);
    expect(await db.session.count({ where: { title: "same origin" } })).toBe(3);
  });

  it("with APP_URL set, only its host and origin are served", async ({ tdb }) => {
    const public_ = await startAppServer({
      env: parseEnv({ PORT: "0", HOST: "127.0.0.1", APP_URL: "https://teams.example.test" }),
      database: tdb,
      pages: false,
      log: () => undefined,
    });
    const savedPort = port;
    port = new URL(public_.url).port;
    try {
      expect((await raw({ path: "/api/trpc/account.status" })).status).toBe(421);
      expect((await raw({ path: "/api/trpc/account.status", host: `localhost:${port}` })).status).toBe(421);
      expect((await raw({ path: "/api/trpc/account.status", host: "teams.example.test" })).status).toBe(200);
      const local = await trpcPost("session.create", { title: "x" }, { cookie, origin: `http://127.0.0.1:${port}` }, "teams.example.test");
      expect(local.status).toBe(403);
      expect(codeOf(local)).toBe("CROSS_SITE_REQUEST");
    } finally {
      port = savedPort;
      await public_.close();
    }
  });
});

describe("security headers", () => {
  it("are on every response: API, auth, feeds, 404s and refusals", async () => {
    const responses: [string, Raw][] = [
      ["query", await raw({ path: "/api/trpc/account.status", headers: { cookie } })],
      ["unauthorized", await raw({ path: "/api/trpc/team.list" })],
      ["unknown procedure", await raw({ path: "/api/trpc/nope.nothing" })],
      ["auth", await raw({ path: "/api/auth/get-session", headers: { cookie } })],
      ["auth 404", await raw({ path: "/api/auth/no-such-endpoint" })],
      ["not found", await raw({ path: "/no/such/page" })],
      ["unknown host", await raw({ path: "/", host: "evil.example" })],
      ["cross-site", await trpcPost("session.create", { title: "x" }, { origin: "https://evil.example" })],
    ];
    for (const [what, r] of responses) expectSecurityHeaders(r, what);
    expect(responses.find(([w]) => w === "not found")![1].status).toBe(404);

    // A live feed's response (SSE) too: read its headers, then hang up.
    const created = await trpcPost("session.create", { title: "feed headers" }, { cookie, origin: server.url });
    const teamId = (superjson.deserialize((JSON.parse(created.body) as { result: { data: Parameters<typeof superjson.deserialize>[0] } }).result.data) as { id: string }).id;
    const feedHeaders = await new Promise<http.IncomingHttpHeaders>((resolve, reject) => {
      const input = encodeURIComponent(superjson.stringify({ teamId, lastEventId: null }));
      const req = http.request(
        { host: "127.0.0.1", port, path: `/api/trpc/team.live?input=${input}`, headers: { host: `127.0.0.1:${port}`, cookie, accept: "text/event-stream" } },
        (res) => {
          resolve(res.headers);
          res.destroy();
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(feedHeaders["content-type"]).toMatch(/text\/event-stream/);
    expectSecurityHeaders({ status: 200, headers: feedHeaders, body: "" }, "feed");
    // No cache keeps people's data: API answers (refusals too) and feeds.
    expect(feedHeaders["cache-control"]).toBe("no-store, no-transform");
    for (const what of ["query", "unauthorized", "unknown procedure"]) expect(responses.find(([w]) => w === what)![1].headers["cache-control"], what).toBe("no-store");
  });
});

// ------------------------------------------------------------------------------------------
// the pure functions

function request(method: string, headers: Record<string, string>): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  req.method = method;
  req.url = "/";
  req.headers = headers;
  return req;
}

describe("clientAddress", () => {
  plainIt("is the socket's address unless a trusted proxy's last X-Forwarded-For entry names the client", () => {
    const req = request("POST", { "x-forwarded-for": "6.6.6.6, 203.0.113.7" });
    Object.defineProperty(req.socket, "remoteAddress", { value: "10.0.0.2" });
    expect(clientAddress(req, false)).toBe("10.0.0.2");
    // Only the entry the proxy appended counts: the client wrote the ones before it.
    expect(clientAddress(req, true)).toBe("203.0.113.7");
    const bare = request("POST", {});
    Object.defineProperty(bare.socket, "remoteAddress", { value: "10.0.0.3" });
    expect(clientAddress(bare, true)).toBe("10.0.0.3");
  });
});

describe("webPolicy", () => {
  plainIt("serves APP_URL's host; locally also the loopback names of the port", () => {
    const local = webPolicy("http://127.0.0.1:3000", { local: true });
    expect([...local.origins].sort()).toEqual(["http://127.0.0.1:3000", "http://[::1]:3000", "http://localhost:3000"]);
    expect([...local.hosts].sort()).toEqual(["127.0.0.1:3000", "[::1]:3000", "localhost:3000"]);
    const public_ = webPolicy("https://Teams.Example.test/some/path", { local: false });
    expect([...public_.origins]).toEqual(["https://teams.example.test"]);
    expect([...public_.hosts]).toEqual(["teams.example.test"]);
    expect(webPolicy("http://teams.example.test:8080", { local: false }).hosts.has("teams.example.test:8080")).toBe(true);
    expect(webPolicy("http://localhost", { local: true }).hosts.has("127.0.0.1")).toBe(true);
    expect(public_.dev).toBe(false);
  });
});

describe("checkRequest", () => {
  const policy: WebPolicy = webPolicy("http://127.0.0.1:3000", { local: true });
  const host = "127.0.0.1:3000";

  plainIt("refuses a missing or unknown host whatever the method", () => {
    for (const method of ["GET", "POST", "HEAD", "OPTIONS"]) {
      expect(checkRequest(request(method, {}), policy)).toMatchObject({ status: 421, code: "UNKNOWN_HOST" });
      expect(checkRequest(request(method, { host: "evil.example" }), policy)).toMatchObject({ status: 421, code: "UNKNOWN_HOST" });
      expect(checkRequest(request(method, { host: "127.0.0.1:3001" }), policy)).toMatchObject({ status: 421 });
    }
    expect(checkRequest(request("GET", { host: "LocalHost:3000" }), policy)).toBeNull();
  });

  plainIt("lets safe methods through and checks every other one", () => {
    for (const method of ["GET", "HEAD", "OPTIONS"]) expect(checkRequest(request(method, { host, origin: "https://evil.example" }), policy)).toBeNull();
    const cases: [Record<string, string>, boolean][] = [
      [{ origin: "http://127.0.0.1:3000" }, true],
      [{ "sec-fetch-site": "same-origin" }, true],
      [{ "sec-fetch-site": "same-origin", origin: "http://127.0.0.1:3000" }, true],
      [{ authorization: "Bearer at_x" }, true],
      [{ authorization: "bearer at_x" }, true],
      [{}, false],
      [{ cookie: "agent-teams.session_token=x" }, false],
      [{ authorization: "Basic eDp5" }, false],
      [{ origin: "https://evil.example" }, false],
      // Locally every loopback name of the port is the app, so their origins are its own too.
      [{ origin: "http://localhost:3000" }, true],
      [{ origin: "http://localhost:3001" }, false],
      [{ origin: "https://127.0.0.1:3000" }, false],
      [{ origin: "null" }, false],
      [{ "sec-fetch-site": "cross-site" }, false],
      [{ "sec-fetch-site": "same-site" }, false],
      [{ "sec-fetch-site": "none" }, false],
      [{ "sec-fetch-site": "same-origin", origin: "https://evil.example" }, false],
      [{ origin: "https://evil.example", authorization: "Bearer at_x" }, false],
      [{ "sec-fetch-site": "cross-site", authorization: "Bearer at_x" }, false],
    ];
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      for (const [headers, allowed] of cases) {
        const got = checkRequest(request(method, { host, ...headers }), policy);
        expect(got, `${method} ${JSON.stringify(headers)}`).toEqual(allowed ? null : expect.objectContaining({ status: 403, code: "CROSS_SITE_REQUEST" }));
      }
    }
  });
});

describe("contentSecurityPolicy", () => {
  plainIt("allows only the page's own scripts, no framing, no plugins, no foreign origins", () => {
    const nonce = newNonce();
    const csp = contentSecurityPolicy(nonce, webPolicy("https://teams.example.test", { local: false }));
    const directives = new Map(csp.split(";").map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name!, values]));
    expect(directives.get("default-src")).toEqual(["'self'"]);
    expect(directives.get("script-src")).toEqual(["'self'", `'nonce-${nonce}'`, "'strict-dynamic'"]);
    expect(directives.get("frame-ancestors")).toEqual(["'none'"]);
    expect(directives.get("object-src")).toEqual(["'none'"]);
    expect(directives.get("base-uri")).toEqual(["'none'"]);
    expect(directives.get("form-action")).toEqual(["'self'"]);
    expect(directives.get("connect-src")).toEqual(["'self'"]);
    expect(csp).not.toMatch(/unsafe-eval|https?:|\*/);
    // Development adds only what Next's dev mode needs.
    const dev = contentSecurityPolicy(nonce, webPolicy("http://127.0.0.1:3000", { local: true, dev: true }));
    expect(dev).toMatch(/script-src [^;]*'unsafe-eval'/);
    expect(dev).toMatch(/connect-src 'self' ws: wss:/);
  });

  plainIt("takes a fresh nonce per page", () => {
    const nonces = new Set(Array.from({ length: 100 }, newNonce));
    expect(nonces.size).toBe(100);
    for (const n of nonces) expect(Buffer.from(n, "base64")).toHaveLength(16);
  });
});
