import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, vi } from "vitest";
import { databaseEnv, type DatabaseUrls, type Db } from "../db/client";
import { databaseTest } from "./fixtures";

// Runtime hosts as real OS processes (server/testing/runtime-process.ts), for crash and
// multi-process tests. Every child started here is remembered until it exits, so a test's
// afterEach can kill what it left behind.

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const children = new Set<RuntimeChild>();

/**
 * A test file's database for child-process tests (the databaseTest fixtures, bound before the
 * file's tests), every child killed after each test. Read `db` and `url` inside tests and hooks.
 */
export function childProcessDatabase(): DatabaseUrls & { db: Db } {
  const out: DatabaseUrls & { db: Db } = { db: undefined as unknown as Db, url: "" };
  databaseTest().beforeAll(({ tdb, db }) => {
    out.url = tdb.url;
    out.directUrl = tdb.directUrl;
    out.db = db;
  });
  afterEach(killRuntimeChildren);
  return out;
}

/** SIGKILLs every child still running (afterEach). */
export async function killRuntimeChildren(): Promise<void> {
  await Promise.all([...children].map((c) => c.kill("SIGKILL")));
}

/** Resolves with the first stdout line of `child` that matches, now or later. */
export function waitForLine(child: RuntimeChild, match: RegExp, timeoutMs = 60_000): Promise<string> {
  return vi.waitFor(
    () => {
      const line = child.lines.find((l) => match.test(l));
      if (line) return line;
      throw new Error(`no line matching ${match} in ${timeoutMs} ms; got:\n${child.lines.join("\n")}\n${child.stderr.join("\n")}`);
    },
    { timeout: timeoutMs, interval: 10 },
  );
}


export interface RuntimeChild {
  proc: ChildProcess;
  ownerId: string;
  /** Every stdout line so far (READY, LOG …, STOPPED). */
  lines: string[];
  stderr: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Runtime log lines (the LOG protocol lines, without the prefix). */
  logs(): string[];
  /** Sends the signal and waits for the process to exit. */
  kill(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export async function spawnRuntime(database: DatabaseUrls, env: Record<string, string>): Promise<RuntimeChild> {
  const proc = spawn(process.execPath, ["--import", "tsx", "server/testing/runtime-process.ts"], {
    cwd: REPO_ROOT,
    // A clean environment: no provider keys or settings of the test runner leak in.
    env: { NODE_ENV: "test", PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...databaseEnv(database), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const stderr: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once("exit", (code, signal) => resolve({ code, signal })),
  );
  let onReady: ((ownerId: string) => void) | null = null;
  createInterface({ input: proc.stdout! }).on("line", (line) => {
    lines.push(line);
    if (line.startsWith("READY ")) onReady?.(line.slice("READY ".length));
  });
  createInterface({ input: proc.stderr! }).on("line", (line) => stderr.push(line));

  let done = false;
  void exited.then(() => (done = true));
  const child: RuntimeChild = {
    proc,
    ownerId: "",
    lines,
    stderr,
    exited,
    logs: () => lines.filter((l) => l.startsWith("LOG ")).map((l) => l.slice(4)),
    async kill(signal) {
      if (!done) proc.kill(signal);
      const result = await exited;
      children.delete(child);
      return result;
    },
  };
  children.add(child);
  child.ownerId = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`runtime process not READY in 60 s: ${stderr.join("\n")}`)), 60_000);
    onReady = (id) => {
      clearTimeout(timer);
      resolve(id);
    };
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`runtime process exited before READY (${code ?? signal}): ${stderr.join("\n")}`));
    });
  });
  return child;
}

