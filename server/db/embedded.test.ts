import { spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { freePort } from "../testing/net";
import { withClient } from "./admin";
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from "./embedded";
import { applyMigrations, defaultMigrationsDir, readMigrations } from "./migrate";


const postmasterPid = async (dataDir: string) =>
  Number.parseInt((await readFile(path.join(dataDir, "postmaster.pid"), "utf8")).split("\n")[0] ?? "", 10);

describe("startEmbeddedPostgres", () => {
  let root: string;
  let dataDir: string;
  let port: number;
  const running: EmbeddedPostgresServer[] = [];
  const logs: string[] = [];
  const start = async () => {
    const server = await startEmbeddedPostgres({ dataDir, port, log: (l) => logs.push(l) });
    running.push(server);
    return server;
  };

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), "embedded-pg-"));
    // mkdtemp makes 0700 dirs; as root the server runs as `postgres`, which must get in.
    await chmod(root, 0o755);
    dataDir = path.join(root, "data");
    port = await freePort();
  });

  afterAll(async () => {
    for (const server of running) await server.stop();
    await rm(root, { recursive: true, force: true });
  });

  it("initialises on first use, serves queries and LISTEN/NOTIFY across connections, and stops", async () => {
    const server = await start();
    expect(server.url).toBe(`postgresql://postgres:postgres@127.0.0.1:${port}/agent_teams`);
    expect(logs.some((l) => l.includes("initialised"))).toBe(true);

    await withClient(server.url, async (c) => {
      const { rows } = await c.query<{ db: string; v: number }>(
        `SELECT current_database() AS db, current_setting('server_version_num')::int AS v`,
      );
      expect(rows[0]?.db).toBe("agent_teams");
      expect(rows[0]?.v).toBeGreaterThanOrEqual(150000);
      await c.query(`CREATE TABLE kept (note text); INSERT INTO kept VALUES ('survives a restart')`);
    });

    const listener = new pg.Client({ connectionString: server.url });
    await listener.connect();
    try {
      const received = new Promise<string | undefined>((resolve) =>
        listener.on("notification", (msg) => resolve(msg.payload)),
      );
      await listener.query("LISTEN agent_events");
      await withClient(server.url, (c) => c.query(`SELECT pg_notify('agent_events', 'hello')`));
      expect(await received).toBe("hello");
    } finally {
      await listener.end();
    }

    await server.stop();
    await server.stop(); // idempotent
    await expect(stat(path.join(dataDir, "postmaster.pid"))).rejects.toThrow();
  });

  it("starts again on the same directory without re-initialising, keeping the data", async () => {
    logs.length = 0;
    const server = await start();
    expect(logs.some((l) => l.includes("initialised"))).toBe(false);
    const rows = await withClient(server.url, async (c) => (await c.query(`SELECT note FROM kept`)).rows);
    expect(rows).toEqual([{ note: "survives a restart" }]);
    // The project's migrations also run on the embedded (newer) server.
    const local = (await readMigrations(defaultMigrationsDir())).map((m) => m.name);
    expect((await applyMigrations(server.url)).applied).toEqual(local);
  });

  it("refuses to start a second server on a data directory that is in use", async () => {
    await expect(start()).rejects.toThrow(/already running on/);
    await running.at(-1)?.stop();
  });

  it("recovers from a killed server whose postmaster.pid now names an unrelated live process", async () => {
    const server = await start();
    const pid = await postmasterPid(dataDir);
    // Simulate the crash this guards against: the server dies without cleaning up, and its pid
    // is reused by a process of the same user (PostgreSQL then refuses to start on its own).
    const exited = vi.waitFor(
      () => {
        try {
          process.kill(pid, 0);
        } catch {
          return;
        }
        throw new Error(`PostgreSQL (pid ${pid}) still running`);
      },
      { timeout: 30_000, interval: 20 },
    );
    process.kill(pid, "SIGKILL");
    await exited;
    await server.stop(); // the child is gone: must not hang

    const stale = await readFile(path.join(dataDir, "postmaster.pid"), "utf8").catch(() => null);
    expect(stale).not.toBeNull();
    const uid = process.getuid?.() === 0 ? Number.parseInt((await execText("id", ["-u", "postgres"])).trim(), 10) : undefined;
    const impostor = spawn("sleep", ["30"], uid === undefined ? {} : { uid });
    try {
      const impostorPid = impostor.pid;
      if (impostorPid === undefined) throw new Error("sleep did not start");
      await writeFile(path.join(dataDir, "postmaster.pid"), (stale ?? "").replace(/^\d+/, String(impostorPid)));

      logs.length = 0;
      const again = await start();
      expect(logs.some((l) => l.includes("removed stale postmaster.pid"))).toBe(true);
      const rows = await withClient(again.url, async (c) => (await c.query(`SELECT note FROM kept`)).rows);
      expect(rows).toEqual([{ note: "survives a restart" }]);
      await again.stop();
    } finally {
      impostor.kill();
    }
  });
});

async function execText(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args);
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} exited ${code}`))));
  });
}
