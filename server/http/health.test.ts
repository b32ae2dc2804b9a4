import { mkdir, mkdtemp, readdir, rm, writeFile, cp } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect } from "vitest";
import { createDb } from "../db/client";
import { defaultMigrationsDir } from "../db/migrate";
import { databaseTest } from "../testing/fixtures";
import { createHealth, type Health } from "./health";

// Readiness says why it is not ready: a draining process, a migration of this build not applied,
// a database that does not answer. Liveness only says the process serves.

const it = databaseTest();
const servers: http.Server[] = [];
afterAll(() => servers.forEach((s) => s.close()));

async function serve(health: Health): Promise<string> {
  const server = http.createServer((req, res) => {
    if (!health.serve(req, res)) res.writeHead(404).end();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const get = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe("health", () => {
  it("ready when the database answers and every migration is applied; 503 once draining", async ({ db }) => {
    const health = createHealth(db);
    const url = await serve(health);
    expect(await get(`${url}/api/health/live`)).toEqual({ status: 200, body: { status: "live" } });
    expect(await get(`${url}/api/health/ready`)).toEqual({ status: 200, body: { status: "ready", checks: { database: "ok", migrations: "ok", draining: false } } });
    health.drain();
    expect(await get(`${url}/api/health/ready`)).toMatchObject({ status: 503, body: { status: "draining", checks: { draining: true } } });
    expect((await get(`${url}/api/health/live`)).status).toBe(200);
  });

  it("not ready while a migration of this build is missing, or the database does not answer", async ({ db }) => {
    const dir = await mkdtemp(path.join(tmpdir(), "health-migrations-"));
    try {
      for (const name of await readdir(defaultMigrationsDir())) await cp(path.join(defaultMigrationsDir(), name), path.join(dir, name), { recursive: true });
      await mkdir(path.join(dir, "29991231000000_newer"));
      await writeFile(path.join(dir, "29991231000000_newer", "migration.sql"), "SELECT 1;\n");
      const url = await serve(createHealth(db, dir));
      expect(await get(`${url}/api/health/ready`)).toMatchObject({ status: 503, body: { status: "not ready", checks: { database: "ok", migrations: "1 not applied" } } });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const dead = createDb({ url: "postgresql://postgres@127.0.0.1:1/nothing" }, 1);
    try {
      const url = await serve(createHealth(dead));
      const answer = await get(`${url}/api/health/ready`);
      expect(answer).toMatchObject({ status: 503, body: { status: "not ready", checks: { migrations: "unknown" } } });
      expect((answer.body.checks as { database: string }).database).not.toBe("ok");
    } finally {
      await dead.$disconnect();
    }
  });
});
