import superjson from "superjson";
import { describe, expect } from "vitest";
import { directUrlOf } from "../db/client";
import { parseEnv } from "../env";
import { startAppServer } from "../main";
import { databaseTest } from "../testing/fixtures";
import { httpClient } from "../testing/http-client";
import { tcpProxy } from "../testing/net";
import { signUpOverHttp } from "../testing/people";
import { RETRY_AFTER_SECONDS } from "./failure";

// The database gone away (every connection dropped, new ones refused, through a TCP proxy the
// test cuts): every request that needs it answers 503 with Retry-After and a stable code, not
// 500 — queries, feeds (their credential lookup by cookie or API token), the auth routes and
// downloads — and all of them work again once it is back.

const it = databaseTest();

describe("while the database is unreachable", () => {
  it("answers 503 with Retry-After everywhere, and recovers when it is back", { timeout: 60_000 }, async ({ tdb }) => {
    const target = new URL(directUrlOf(tdb));
    const proxy = await tcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const url = new URL(directUrlOf(tdb));
    url.port = String(proxy.port);
    const server = await startAppServer({ env: parseEnv({ PORT: "0", HOST: "127.0.0.1" }), database: { url: url.toString() }, pages: false, log: () => undefined });
    try {
      const owner = await signUpOverHttp(server.url, { name: "Ana", email: "ana@example.test", password: "correct horse battery" });
      const { token } = await httpClient(server.url, { cookie: owner.cookie }).account.createToken.mutate({ name: "script" });
      const team = await httpClient(server.url, { cookie: owner.cookie }).session.create.mutate({ title: "outage" });

      const input = (v: unknown) => encodeURIComponent(superjson.stringify(v));
      const requests: [string, () => Promise<Response>][] = [
        ["a query by cookie", () => fetch(`${server.url}/api/trpc/team.list?input=${input({})}`, { headers: { cookie: owner.cookie } })],
        ["a query by API token", () => fetch(`${server.url}/api/trpc/team.list?input=${input({})}`, { headers: { authorization: `Bearer ${token}` } })],
        [
          "a feed by API token",
          () =>
            fetch(`${server.url}/api/trpc/team.live?input=${input({ teamId: team.id })}`, {
              headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" },
            }),
        ],
        [
          "a mutation",
          () =>
            fetch(`${server.url}/api/trpc/session.create`, {
              method: "POST",
              headers: { cookie: owner.cookie, origin: server.url, "content-type": "application/json" },
              body: superjson.stringify({ title: "during" }),
            }),
        ],
        [
          "sign-in",
          () =>
            fetch(`${server.url}/api/auth/sign-in/email`, {
              method: "POST",
              headers: { origin: server.url, "content-type": "application/json" },
              body: JSON.stringify({ email: "ana@example.test", password: "correct horse battery" }),
            }),
        ],
        ["a download", () => fetch(`${server.url}/api/teams/${team.id}/workspace.zip`, { headers: { cookie: owner.cookie } })],
      ];

      proxy.cut();
      for (const [what, request] of requests) {
        const res = await request();
        const body = await res.text();
        expect(res.status, `${what}: ${body.slice(0, 300)}`).toBe(503);
        expect(res.headers.get("retry-after"), what).toBe(String(RETRY_AFTER_SECONDS));
        expect(body, what).toMatch(/UNAVAILABLE/);
        expect(body, what).not.toMatch(/Internal error|ECONN|Connection terminated|at \w+ \(/);
      }

      proxy.restore();
      for (const [what, request] of requests) {
        await expect
          .poll(
            async () => {
              const res = await request();
              await res.body?.cancel();
              return res.status;
            },
            { timeout: 15_000, message: what },
          )
          .toBe(200);
      }
    } finally {
      await server.close();
      await proxy.close();
    }
  });
});
