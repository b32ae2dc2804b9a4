import { spawn, type ChildProcess } from "node:child_process";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import superjson from "superjson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../server/testing/net";
import { signUpOverHttp } from "../server/testing/people";
import { waitFor } from "../server/testing/runtime-harness";

// `npm start` with the embedded PostgreSQL, stopped the way a terminal's Ctrl-C stops it: a
// signal to the whole process group. The app closes its turns (interrupted) and releases its
// leases while the database still runs; the database stops last; nothing logs an error; and
// the next start resumes the work at once (the lease TTL here is 10 minutes, so a lease left
// held would stall it for the whole test).

const ROOT = fileURLToPath(new URL("..", import.meta.url));


interface App {
  proc: ChildProcess;
  lines: string[];
  url: string;
  exited: Promise<number | null>;
}

let root: string;
let pgPort: number;
const apps: App[] = [];

async function startApp(extraEnv: Record<string, string> = {}): Promise<App> {
  // detached: its own process group, as a shell gives a foreground job.
  const proc = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts", "--no-pages"], {
    cwd: ROOT,
    detached: true,
    env: {
      NODE_ENV: "production",
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      EMBEDDED_PG_DIR: path.join(root, "pg"),
      EMBEDDED_PG_PORT: String(pgPort),
      PORT: "0",
      HOST: "127.0.0.1",
      SCRIPTED_MODEL_DELAY_MS: "150",
      AGENT_LEASE_TTL_MS: "600000",
      ...extraEnv,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  // The log is JSON lines (pino): each line's message is what is matched.
  const messageOf = (line: string) => {
    try {
      return String((JSON.parse(line) as { msg?: unknown }).msg ?? line);
    } catch {
      return line;
    }
  };
  const collect = (chunk: Buffer) => lines.push(...chunk.toString().split("\n").filter(Boolean).map(messageOf));
  proc.stdout!.on("data", collect);
  proc.stderr!.on("data", collect);
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  const app: App = { proc, lines, url: "", exited };
  apps.push(app);
  const ready = await waitFor(() => lines.find((l) => l.startsWith("Agent Teams is ready on ")), 120_000, `the app to start: ${lines.join("\n")}`);
  app.url = ready.slice("Agent Teams is ready on ".length);
  return app;
}

/** The owner's session cookie: a database session, so it still works after a restart. */
let cookie = "";

async function rpc<T>(app: App, path: string, input: unknown, method: "GET" | "POST" = "POST"): Promise<T> {
  const encoded = superjson.stringify(input);
  const res =
    method === "POST"
      ? await fetch(`${app.url}/api/trpc/${path}`, {
          method,
          headers: { "content-type": "application/json", cookie, origin: app.url },
          body: encoded,
        })
      : await fetch(`${app.url}/api/trpc/${path}?input=${encodeURIComponent(encoded)}`, { headers: { cookie } });
  const body = (await res.json()) as { result?: { data: unknown }; error?: unknown };
  if (!body.result) throw new Error(`${path}: ${JSON.stringify(body.error)}`);
  return superjson.deserialize(body.result.data as Parameters<typeof superjson.deserialize>[0]) as T;
}

interface Ev {
  seq: number;
  payload: { kind: string; reason?: string; text?: string };
}
const transcript = async (app: App, sessionId: string) =>
  (await rpc<{ events: Ev[] }>(app, "session.transcript", { sessionId, limit: 1000 }, "GET")).events;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "start-sigint-"));
  await chmod(root, 0o755); // the embedded server runs as `postgres` when we are root
  pgPort = await freePort();
});
afterAll(async () => {
  for (const a of apps) if (a.proc.exitCode === null) process.kill(-a.proc.pid!, "SIGKILL");
  await rm(root, { recursive: true, force: true });
});

describe("npm start with the embedded PostgreSQL", () => {
  it("stops cleanly on a signal to the whole process group, and the next start resumes at once", { timeout: 300_000 }, async () => {
    const first = await startApp();
    // A fresh instance has no account: the first sign-up is its owner's.
    expect(await rpc<{ hasOwner: boolean; me: unknown }>(first, "account.status", undefined, "GET")).toMatchObject({ hasOwner: false, me: null });
    cookie = (await signUpOverHttp(first.url, { name: "Owner" })).cookie;
    const session = await rpc<{ id: string }>(first, "session.create", { title: "Ctrl-C" });
    await rpc(first, "session.prompt", { sessionId: session.id, text: "A long answer, please" });
    await waitFor(async () => (await transcript(first, session.id)).some((e) => e.payload.kind === "assistant_delta"), 60_000, "streaming");

    process.kill(-first.proc.pid!, "SIGINT");
    expect(await first.exited).toBe(0);
    const out = first.lines.join("\n");
    expect(out).toContain("Agent Teams stopped.");
    expect(out).not.toMatch(/crashed|57P0\d|error|terminating connection/i);

    const second = await startApp({ SHUTDOWN_DRAIN_MS: "5000" });
    // The cut turn was closed as interrupted by the first process, and the restart notice
    // runs at once on the next start: the lease was released.
    const events = await waitFor(
      async () => {
        const ev = await transcript(second, session.id);
        return ev.filter((e) => e.payload.kind === "turn_end").length >= 2 ? ev : null;
      },
      120_000,
      "the resumed turn",
    );
    const ends = events.filter((e) => e.payload.kind === "turn_end").map((e) => e.payload.reason);
    expect(ends).toEqual(["interrupted", "completed"]);
    expect(second.lines.join("\n")).not.toMatch(/left open by a crash/);
    // Health: live and ready; on SIGTERM ready answers 503 (draining) first, then the app exits 0.
    const ready = () => fetch(`${second.url}/api/health/ready`).then(async (r) => ({ status: r.status, body: (await r.json()) as { status: string } }));
    expect((await fetch(`${second.url}/api/health/live`)).status).toBe(200);
    expect(await ready()).toEqual({ status: 200, body: expect.objectContaining({ status: "ready" }) });
    process.kill(-second.proc.pid!, "SIGTERM");
    await waitFor(() => second.lines.some((l) => l.includes("draining for 5000 ms")) || null, 10_000, "draining");
    expect(await ready()).toEqual({ status: 503, body: expect.objectContaining({ status: "draining" }) });
    expect(await second.exited).toBe(0);
    expect(second.lines.join("\n")).not.toMatch(/crashed|57P0\d|error/i);
  });
});
