import { parseEnv } from "../env";
import { createModelResolver, priceOf } from "../models/registry";
import { startFakeProviderServer } from "../models/testing/fake-provider-server";
import { databaseTest } from "./fixtures";
import { startTestRuntime } from "./runtime-harness";

// databaseTest plus `fake`, the fake provider server, and `rt`, a test runtime whose model
// registry reaches both real provider families on it (the real SDK code path), wired as
// server/main.ts wires it (resilient models, the price table). `env` adds to or overrides the
// environment (test keys by default).

export function fakeProviderTest(env: Record<string, string> = {}) {
  return databaseTest()
    // `{}`, not `_`: vitest reads which fixtures a fixture uses from this pattern.
    .extend("fake", { scope: "file" }, async ({}, { onCleanup }) => {
      const fake = await startFakeProviderServer();
      onCleanup(() => fake.close());
      return fake;
    })
    .extend("rt", { scope: "file" }, async ({ tdb, fake }, { onCleanup }) => {
      const parsed = parseEnv({
        OPENAI_BASE_URL: fake.baseURL,
        OPENAI_API_KEY: "sk-test-openai",
        ANTHROPIC_BASE_URL: fake.baseURL,
        ANTHROPIC_API_KEY: "sk-test-anthropic",
        ...env,
      });
      const rt = await startTestRuntime(tdb, { resolveModel: createModelResolver(parsed), priceOf: (c) => priceOf(parsed, c) });
      onCleanup(() => rt.stop());
      return rt;
    });
}
