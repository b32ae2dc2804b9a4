import { parseEnv, type Env } from "../env";
import { startAppServer } from "../main";
import type { TrpcContext } from "../trpc/init";
import { createCaller } from "../trpc/root";
import { databaseTest, runtimeTest } from "./fixtures";
import { createTestPerson } from "./people";
import type { TestRuntimeOptions } from "./runtime-harness";

// Fixtures for tests of the API: one app server per file over HTTP, or in-process callers of
// the routers as one signed-in person.

/** The whole app on a free port of 127.0.0.1 (no pages), for the file; `env` adds settings. */
export function appServerTest(env: Record<string, string> = {}, opts: { poolSize?: number } = {}) {
  return databaseTest(opts).extend("server", { scope: "file" }, async ({ tdb }, { onCleanup }) => {
    const server = await startAppServer({ env: parseEnv({ PORT: "0", HOST: "127.0.0.1", ...env }), database: tdb, pages: false, log: () => undefined });
    onCleanup(() => server.close());
    return server;
  });
}

/** A test runtime and the routers called in-process (`createCaller`) as the person named `person`. */
export function callerTest(opts: TestRuntimeOptions, person: string, env: Env = parseEnv({})) {
  return runtimeTest(opts)
    .extend("ctx", { scope: "file" }, async ({ rt }): Promise<TrpcContext> => ({
      db: rt.db,
      env,
      hub: rt.hub,
      runtime: rt.runtime,
      person: await createTestPerson(rt.db, person),
    }))
    .extend("trpc", { scope: "file" }, ({ ctx }) => createCaller(ctx));
}
