import { readFileSync } from "node:fs";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseEnv } from "../env";
import { defaultModelOf, KNOWN_MODELS, readmeModelTable, UNKNOWN_ANTHROPIC_MAX_OUTPUT_TOKENS } from "./known-models";
import { createModelResolver } from "./registry";
import { startFakeProviderServer, type FakeProviderServer } from "./testing/fake-provider-server";
import type { ModelChoice } from "./choice";

// One catalogue of model ids and output limits: the README's table and defaults agree with it,
// and every request to a real provider asks for the model's limit, so the SDK never caps it
// with a warning.

const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

describe("the README", () => {
  it("shows the catalogue's model table (`npm run readme:models` writes it)", () => {
    const table = /<!-- models:start -->\n([\s\S]*?)\n<!-- models:end -->/.exec(README)?.[1];
    expect(table).toBe(readmeModelTable());
  });

  it("names the defaults the code uses", () => {
    const row = (variable: string) => README.split("\n").find((l) => l.startsWith("|") && l.includes(`\`${variable}\``));
    expect(row("ANTHROPIC_MODEL")).toContain(`\`${defaultModelOf("anthropic")}\``);
    expect(row("OPENAI_MODEL")).toContain(`\`${defaultModelOf("openai-compatible")}\``);
    const env = parseEnv({});
    expect([env.ANTHROPIC_MODEL, env.OPENAI_MODEL]).toEqual([defaultModelOf("anthropic"), defaultModelOf("openai-compatible")]);
  });
});

describe("output limits on the wire", () => {
  let server: FakeProviderServer;
  const warnings: unknown[] = [];
  beforeAll(async () => {
    server = await startFakeProviderServer();
    globalThis.AI_SDK_LOG_WARNINGS = (options) => warnings.push(...options.warnings);
  });
  afterAll(async () => {
    globalThis.AI_SDK_LOG_WARNINGS = undefined;
    await server.close();
  });
  beforeEach(() => server.reset());

  /** The output limit one step of `choice` sent (`max_tokens` in both wire formats). */
  async function sentLimit(choice: ModelChoice, models: unknown[] = []): Promise<unknown> {
    const env = parseEnv({
      ANTHROPIC_API_KEY: "ak-test",
      ANTHROPIC_BASE_URL: server.baseURL,
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: server.baseURL,
      MODEL_MAX_RETRIES: "0",
      MODELS: JSON.stringify(models),
    });
    server.enqueue({ text: ["ok"] });
    const model = createModelResolver(env)(choice);
    for await (const chunk of model.stream({ system: "s", purpose: "step", tools: [], messages: [{ role: "user", text: "Hi" }] }, new AbortController().signal)) void chunk;
    return (server.requests.at(-1)!.body as Record<string, unknown>).max_tokens;
  }

  it("asks each known model for its limit, without a warning", async () => {
    for (const known of KNOWN_MODELS) expect(await sentLimit(known), known.model).toBe(known.maxOutputTokens);
    expect(warnings).toEqual([]);
  });

  it("asks an unknown Anthropic model for the safe minimum, and an unknown OpenAI-compatible one for none", async () => {
    expect(await sentLimit({ provider: "anthropic", model: "claude-next" })).toBe(UNKNOWN_ANTHROPIC_MAX_OUTPUT_TOKENS);
    expect(await sentLimit({ provider: "openai-compatible", model: "llama-local" })).toBeUndefined();
    expect(warnings).toEqual([]);
  });

  it("takes a MODELS entry's maxOutputTokens over the catalogue's", async () => {
    const entry = { provider: "anthropic", model: "claude-next", label: "Next", maxOutputTokens: 12_000 };
    expect(await sentLimit({ provider: "anthropic", model: "claude-next" }, [entry])).toBe(12_000);
    expect(await sentLimit({ provider: "openai-compatible", model: "llama-local" }, [{ ...entry, provider: "openai-compatible", model: "llama-local" }])).toBe(12_000);
  });
});
