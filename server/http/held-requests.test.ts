import http from "node:http";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { heldRequests } from "./held-requests";

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

async function listening(listener: http.RequestListener): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer(listener);
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

describe("heldRequests", () => {
  it("holds a request that comes before the handler and answers it with the handler", async () => {
    const held = heldRequests();
    const { server, url } = await listening(held.listener);
    const arrived = once(server, "request");
    const response = fetch(url);
    await arrived; // the request is in, and no handler yet
    held.serve((_req, res) => res.end("served"));
    const res = await response;
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("served");
  });

  it("drops a held request whose client left before the handler came", async () => {
    const held = heldRequests();
    const { server, url } = await listening(held.listener);
    const arrived = once(server, "request") as Promise<[http.IncomingMessage, http.ServerResponse]>;
    const client = new AbortController();
    const response = fetch(url, { signal: client.signal }).catch(() => "aborted");
    const [req] = await arrived;
    const closed = once(req.socket, "close");
    client.abort();
    await closed;
    const handled: string[] = [];
    held.serve((r, res) => {
      handled.push(r.url ?? "");
      res.end();
    });
    expect(await response).toBe("aborted");
    expect(handled).toEqual([]);
  });

  it("hands requests after it straight to the handler", async () => {
    const held = heldRequests();
    held.serve((req, res) => res.end(`served ${req.url}`));
    const { url } = await listening(held.listener);
    expect(await (await fetch(`${url}x`)).text()).toBe("served /x");
  });
});
