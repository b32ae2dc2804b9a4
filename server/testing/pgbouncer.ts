// A PgBouncer in transaction mode in front of a Postgres server, as a child process, for tests
// and benchmarks of the pooled configuration (DATABASE_URL through the pooler,
// DIRECT_DATABASE_URL straight to the server). Every database of the server is reachable
// through it under its own name (a `*` entry), so per-file test databases need no config.
import { type ChildProcess, execFileSync } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { connect } from "node:net";
import { spawnInstalled, stopChild } from "./installed";
import { freePort } from "./net";

export interface PgBouncer {
  port: number;
  /** `url` with its host and port replaced by the pooler's (same database, user, password). */
  through(url: string): string;
  stop(): Promise<void>;
}

/** `url` with its host and port replaced by a pooler's on 127.0.0.1 (same database, user, password). */
export function throughPooler(url: string, port: number): string {
  const u = new URL(url);
  u.hostname = "127.0.0.1";
  u.port = String(port);
  return u.toString();
}

/** The system user PgBouncer switches to when started as root (it refuses to run as root). */
const RUN_AS = "postgres";

export async function startPgBouncer(serverUrl: string, opts: { poolSize?: number } = {}): Promise<PgBouncer> {
  const server = new URL(serverUrl);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "pgbouncer-"));
  // Started as root, PgBouncer runs as RUN_AS, which must be able to read its files.
  const asRoot = userInfo().uid === 0;
  chmodSync(dir, 0o755);
  const ini = join(dir, "pgbouncer.ini");
  const users = join(dir, "users.txt");
  const user = decodeURIComponent(server.username || "postgres");
  const password = decodeURIComponent(server.password);
  // With a password, clients must give it here too, and only PgBouncer's user reads the file.
  writeFileSync(users, `"${user}" "${password}"\n`, { mode: password ? 0o600 : 0o644 });
  if (password && asRoot) {
    const id = (flag: string) => Number(execFileSync("id", [flag, RUN_AS]).toString().trim());
    chownSync(users, id("-u"), id("-g"));
  }
  writeFileSync(
    ini,
    [
      "[databases]",
      `* = host=${server.hostname} port=${server.port || 5432}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      `unix_socket_dir = ${dir}`,
      `auth_type = ${password ? "scram-sha-256" : "trust"}`,
      `auth_file = ${users}`,
      "pool_mode = transaction",
      `default_pool_size = ${opts.poolSize ?? 20}`,
      "max_client_conn = 2000",
      // Test databases come and go by the thousand: their pools go when idle.
      "autodb_idle_timeout = 30",
      "ignore_startup_parameters = extra_float_digits,options",
      "server_reset_query =",
      // 1.21+ would keep named statements across server connections: the app must not need that.
      ...((await preparesStatements()) ? ["max_prepared_statements = 0"] : []),
      "",
    ].join("\n"),
    { mode: 0o644 },
  );
  const child = await spawnInstalled("pgbouncer", [...(asRoot ? ["-u", RUN_AS] : []), ini]);
  const output: string[] = [];
  child.stderr?.on("data", (d: Buffer) => output.push(d.toString()));
  child.stdout?.on("data", (d: Buffer) => output.push(d.toString()));
  try {
    await waitForPort(port, child, () => output.join(""));
  } catch (e) {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    port,
    through: (url) => throughPooler(url, port),
    async stop() {
      await stopChild(child, "SIGINT");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Whether this PgBouncer knows prepared statements (1.21 and later; 1.18 refuses the setting). */
async function preparesStatements(): Promise<boolean> {
  const child = await spawnInstalled("pgbouncer", ["--version"]);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  await new Promise((resolve) => child.once("close", resolve));
  const m = /PgBouncer (\d+)\.(\d+)/.exec(out);
  return m !== null && (Number(m[1]) > 1 || Number(m[2]) >= 21);
}

async function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited with ${child.exitCode}: ${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const s = connect(port, "127.0.0.1");
      s.once("connect", () => (s.destroy(), resolve(true)));
      s.once("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`pgbouncer did not listen on ${port}: ${output()}`);
}
