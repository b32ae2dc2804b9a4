// HAProxy in front of app server processes, as an operator runs it: round robin, a backend
// taken out when /api/health/ready fails, long-lived event streams passed through.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnInstalled, stopChild } from "./installed";
import { freePort } from "./net";

export interface Haproxy {
  url: string;
  stop(): Promise<void>;
}

/**
 * `backends` (ports on 127.0.0.1) behind one port (`port`, default a free one): round robin, or
 * `first` (everything to the first backend that is up, as when one process serves a browser).
 */
export async function startHaproxy(backends: number[], opts: { port?: number; balance?: "roundrobin" | "first" } = {}): Promise<Haproxy> {
  const port = opts.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), "haproxy-"));
  const cfg = join(dir, "haproxy.cfg");
  writeFileSync(
    cfg,
    [
      "defaults",
      "  mode http",
      "  timeout connect 1s",
      "  timeout client 1h",
      "  timeout server 1h",
      // A request to a backend that just died goes to another one.
      "  option redispatch",
      "  retries 2",
      "frontend app",
      `  bind 127.0.0.1:${port}`,
      "  default_backend apps",
      "backend apps",
      `  balance ${opts.balance ?? "roundrobin"}`,
      "  option httpchk GET /api/health/ready",
      "  default-server inter 200ms fall 2 rise 1",
      ...backends.map((p, i) => `  server app${i + 1} 127.0.0.1:${p} check`),
      "",
    ].join("\n"),
  );
  const child = await spawnInstalled("haproxy", ["-db", "-f", cfg]);
  const output: string[] = [];
  child.stdout?.on("data", (d: Buffer) => output.push(d.toString()));
  child.stderr?.on("data", (d: Buffer) => output.push(d.toString()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`haproxy exited with ${child.exitCode}: ${output.join("")}`);
    const ok = await fetch(`${url}/api/health/live`).then((r) => r.ok, () => false);
    if (ok) break;
    if (i > 200) {
      child.kill("SIGKILL");
      throw new Error(`haproxy did not serve ${url}: ${output.join("")}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    url,
    async stop() {
      await stopChild(child, "SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
