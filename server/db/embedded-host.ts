// The embedded PostgreSQL's own host process, forked by startDetachedEmbeddedPostgres (see
// embedded.ts). It runs in a process group of its own, so a terminal's Ctrl-C (SIGINT to the
// foreground group) never reaches it or the server it starts: the app closes its turns and
// releases its leases first, then asks this process to stop the database.
//
// Protocol over the IPC channel: → {type:"ready", url} | {type:"log", line} | {type:"failed", message};
// ← {type:"stop"}. The parent going away (the channel closes) stops the server too.
import { z } from "zod";
import { startEmbeddedPostgres } from "./embedded";

const Options = z.object({ dataDir: z.string(), port: z.number().int(), database: z.string().optional() });
const send = (m: unknown) => new Promise<void>((resolve) => (process.send ? process.send(m, () => resolve()) : resolve()));

async function main(): Promise<void> {
  const opts = Options.parse(JSON.parse(process.env.EMBEDDED_PG_OPTIONS ?? "{}"));
  const server = await startEmbeddedPostgres({ ...opts, log: (line) => void send({ type: "log", line }) });
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= server
      .stop()
      .catch(() => undefined)
      .finally(() => process.exit(0)));
  process.on("message", (m) => {
    if (typeof m === "object" && m !== null && (m as { type?: unknown }).type === "stop") void stop();
  });
  process.on("disconnect", () => void stop());
  await send({ type: "ready", url: server.url });
}

main().catch(async (e: unknown) => {
  const cause = e instanceof Error && e.cause instanceof Error ? ` (${e.cause.message})` : "";
  await send({ type: "failed", message: `${e instanceof Error ? e.message : String(e)}${cause}` });
  process.exit(1);
});
