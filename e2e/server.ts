import { spawn, type ChildProcess } from "node:child_process";

// A second app server for the tests that need their own database: a fresh instance (people),
// or one killed and started again on the same database (restart). The main e2e server has
// already built the pages.

export function startServer(databaseUrl: string, port: number, env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn("node", ["--import", "tsx", "scripts/e2e-server.ts"], {
    env: { ...process.env, PORT: String(port), E2E_DATABASE_URL: databaseUrl, E2E_SKIP_BUILD: "1", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`server exited early (${code})`)));
    child.stdout!.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("e2e server ready")) resolve(child);
    });
  });
}

/** SIGTERM and wait: the server closes its turns before the test drops the database. */
export async function stopServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise((r) => server.once("exit", r));
  server.kill("SIGTERM");
  await exited;
}
