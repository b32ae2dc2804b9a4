import { type ChildProcess, spawn } from "node:child_process";

/**
 * Spawns a system program installed from the distribution's packages (PgBouncer, HAProxy),
 * trying its usual places: Debian puts them in /usr/sbin, often not on a user's PATH.
 */
export function spawnInstalled(name: string, args: string[]): Promise<ChildProcess> {
  const tryFrom = (candidates: string[]): Promise<ChildProcess> => {
    const [command, ...rest] = candidates;
    if (!command) return Promise.reject(new Error(`${name} is not installed (Debian: apt-get install ${name})`));
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
      child.once("spawn", () => resolve(child));
      child.once("error", (e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? tryFrom(rest).then(resolve, reject) : reject(e)));
    });
  };
  return tryFrom([name, `/usr/sbin/${name}`, `/usr/local/sbin/${name}`, `/usr/local/bin/${name}`]);
}

/** Sends `signal` to a child still running and waits for it to exit. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill(signal);
  await exited;
}
