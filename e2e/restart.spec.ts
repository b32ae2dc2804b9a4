import { spawn, type ChildProcess } from "node:child_process";
import { expect, test } from "@playwright/test";
import { createTemporaryDatabase, temporaryDatabaseName, testServerUrl } from "../server/db/temporary";
import { agentStatus, createTeam, finalAnswer, send, transcript } from "./helpers";

// Kill the server with SIGKILL in the middle of a team run and start it again on the same
// database: the page reconnects by itself, nothing is lost, and the scenario finishes.

const port = Number(process.env.E2E_RESTART_PORT ?? 3190);

function startServer(url: string): Promise<ChildProcess> {
  const child = spawn("node", ["--import", "tsx", "scripts/e2e-server.ts"], {
    env: { ...process.env, PORT: String(port), E2E_DATABASE_URL: url, E2E_SKIP_BUILD: "1", AGENT_LEASE_TTL_MS: "1500" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`server exited early (${code})`)));
    child.stdout!.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("e2e server ready")) resolve(child);
    });
  });
}

test("a SIGKILLed server comes back: the room reconnects and the team finishes", async ({ page }) => {
  test.setTimeout(180_000);
  // The e2e server migrates it.
  const database = await createTemporaryDatabase(testServerUrl(), temporaryDatabaseName("at_e2e_restart_"), { migrate: false });
  const { url } = database;
  let server = await startServer(url);
  try {
    await createTeam(page, "Survives restarts", `http://127.0.0.1:${port}/`);
    await send(page, "Build a tiny todo app");
    await expect(page.getByRole("button", { name: /^researcher \(teammate\)/ })).toBeVisible({ timeout: 30_000 });
    const promptsBefore = await transcript(page).getByRole("article", { name: "Prompt" }).count();

    server.kill("SIGKILL");
    await new Promise((r) => server.once("exit", r));
    await expect(page.getByRole("status").filter({ hasText: "Reconnecting" }).first()).toBeVisible({ timeout: 30_000 });
    server = await startServer(url);

    await expect(finalAnswer(page)).toBeVisible({ timeout: 120_000 });
    await expect(agentStatus(page, "idle")).toBeVisible({ timeout: 30_000 });
    await expect(transcript(page).getByRole("article", { name: "Prompt" })).toHaveCount(promptsBefore);
    await expect(page.getByRole("region", { name: "Completed tasks" }).getByRole("listitem")).toHaveCount(2);
  } finally {
    if (server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((r) => server.once("exit", r));
      server.kill("SIGTERM");
      await exited;
    }
    await database.drop().catch(() => undefined);
  }
});
