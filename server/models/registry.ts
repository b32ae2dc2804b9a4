import { AppError } from "../errors";
import { createAnthropicModel, createOpenAICompatibleModel } from "./ai-sdk";
import { FREE, sameModel, type CatalogEntry, type ModelOption, type Price } from "./catalog";
import { modelKey } from "../../shared/model-text";
import { maxOutputTokensOf } from "./known-models";
import { SCRIPTED_CHOICE, type ModelChoice } from "./choice";
import { ConcurrencyLimiter, resilientModel } from "./resilience";
import { retryPolicyOf, type RetrySettings } from "./retry-policy";
import { ScriptedModel, type Playbook } from "./scripted";
import type { LanguageModel } from "./types";

// Which models a session may choose, and how a choice becomes a LanguageModel. Keys stay in
// the server's environment; the browser only ever sees provider and model names.

/** What the model registry reads of the server's settings (env.ts's Env has these, validated). */
export interface ModelSettings extends RetrySettings {
  MODELS: readonly CatalogEntry[];
  SCRIPTED_MODEL_DELAY_MS: number;
  OPENAI_BASE_URL?: string;
  OPENAI_API_KEY?: string;
  OPENAI_MODEL: string;
  OPENAI_MAX_CONCURRENT_REQUESTS: number;
  ANTHROPIC_BASE_URL?: string;
  ANTHROPIC_API_KEY?: string;
  ANTHROPIC_MODEL: string;
  ANTHROPIC_MAX_CONCURRENT_REQUESTS: number;
  MODEL_FIRST_TOKEN_TIMEOUT_MS: number;
  MODEL_REQUEST_TIMEOUT_MS: number;
}

export type { ModelOption };

function configured(env: ModelSettings, provider: ModelChoice["provider"]): boolean {
  if (provider === "openai-compatible") return Boolean(env.OPENAI_BASE_URL || env.OPENAI_API_KEY);
  if (provider === "anthropic") return Boolean(env.ANTHROPIC_API_KEY);
  return true;
}

/**
 * What this server offers, in order: the keyless model, then the `MODELS` list (entries of
 * providers without a key are left out), then OPENAI_MODEL / ANTHROPIC_MODEL for a configured
 * provider the list names no model of. A `MODELS` entry for the keyless model sets its label
 * and price (so the demo can show costs).
 */
export function availableModels(env: ModelSettings): ModelOption[] {
  const listed = env.MODELS;
  const entryFor = (c: ModelChoice) => listed.find((e) => sameModel(e, c));
  const option = (c: ModelChoice, fallbackLabel: string): ModelOption => {
    const e = entryFor(c);
    // The keyless model is free unless listed; a real model without an entry has no price (not "free").
    return { provider: c.provider, model: c.model, label: e?.label ?? fallbackLabel, price: e?.price ?? (c.provider === "scripted" ? FREE : null) };
  };
  const out: ModelOption[] = [option(SCRIPTED_CHOICE, "Keyless scripted model (no API key)")];
  for (const e of listed) {
    if (e.provider === "scripted" || !configured(env, e.provider) || out.some((o) => sameModel(o, e))) continue;
    out.push(option(e, modelKey(e)));
  }
  const fallbacks: [ModelChoice["provider"], string, string][] = [
    ["openai-compatible", env.OPENAI_MODEL, "OpenAI-compatible"],
    ["anthropic", env.ANTHROPIC_MODEL, "Anthropic"],
  ];
  for (const [provider, model, name] of fallbacks) {
    if (configured(env, provider) && !listed.some((e) => e.provider === provider)) out.push(option({ provider, model }, `${name}: ${model}`));
  }
  return out;
}

/** What a model's steps cost: its `MODELS` entry's price (offered or not any more), else nothing. */
export function priceOf(env: ModelSettings, choice: ModelChoice): Price {
  return env.MODELS.find((e) => sameModel(e, choice))?.price ?? FREE;
}

export type ModelResolver = (choice: ModelChoice) => LanguageModel;

export function createModelResolver(env: ModelSettings, opts: { playbook?: Playbook } = {}): ModelResolver {
  const scripted = new ScriptedModel({ delayMs: env.SCRIPTED_MODEL_DELAY_MS, playbook: opts.playbook });
  // One limiter per provider family for this resolver, i.e. for the process (main.ts makes one).
  const resilient = (limiter: ConcurrencyLimiter) => (model: LanguageModel) =>
    resilientModel(model, { retry: retryPolicyOf(env), firstTokenTimeoutMs: env.MODEL_FIRST_TOKEN_TIMEOUT_MS, requestTimeoutMs: env.MODEL_REQUEST_TIMEOUT_MS, limiter });
  const openai = resilient(new ConcurrencyLimiter(env.OPENAI_MAX_CONCURRENT_REQUESTS));
  const anthropic = resilient(new ConcurrencyLimiter(env.ANTHROPIC_MAX_CONCURRENT_REQUESTS));
  return (choice) => {
    const maxOutputTokens = maxOutputTokensOf(choice, env.MODELS.find((e) => sameModel(e, choice))?.maxOutputTokens);
    if (!configured(env, choice.provider)) {
      throw new AppError("MODEL_UNAVAILABLE", `Model provider "${choice.provider}" is not configured on this server`);
    }
    switch (choice.provider) {
      case "scripted":
        return scripted;
      case "openai-compatible":
        return openai(
          createOpenAICompatibleModel({
            baseURL: env.OPENAI_BASE_URL ?? "https://api.openai.com/v1",
            apiKey: env.OPENAI_API_KEY,
            model: choice.model,
            maxOutputTokens,
          }),
        );
      case "anthropic":
        return anthropic(createAnthropicModel({ baseURL: env.ANTHROPIC_BASE_URL, apiKey: env.ANTHROPIC_API_KEY ?? "", model: choice.model, maxOutputTokens }));
    }
  };
}

/** Validates a choice against what this server offers. */
export function assertModelAvailable(env: ModelSettings, choice: ModelChoice): void {
  if (!availableModels(env).some((m) => sameModel(m, choice))) {
    throw new AppError("MODEL_UNAVAILABLE", `Model ${modelKey(choice)} is not offered on this server`);
  }
}
