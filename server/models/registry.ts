import type { Env } from "../env";
import { AppError } from "../errors";
import { createAnthropicModel, createOpenAICompatibleModel } from "./ai-sdk";
import { SCRIPTED_CHOICE, type ModelChoice } from "./choice";
import { ScriptedModel, type Playbook } from "./scripted";
import type { LanguageModel } from "./types";

// Which models a session may choose, and how a choice becomes a LanguageModel. Keys stay in
// the server's environment; the browser only ever sees provider and model names.

export interface ModelOption extends ModelChoice {
  label: string;
}

export function availableModels(env: Env): ModelOption[] {
  const out: ModelOption[] = [{ ...SCRIPTED_CHOICE, label: "Keyless scripted model (no API key)" }];
  if (env.OPENAI_BASE_URL || env.OPENAI_API_KEY) {
    const model = env.OPENAI_MODEL ?? "gpt-4o-mini";
    out.push({ provider: "openai-compatible", model, label: `OpenAI-compatible: ${model}` });
  }
  if (env.ANTHROPIC_API_KEY) {
    out.push({ provider: "anthropic", model: env.ANTHROPIC_MODEL, label: `Anthropic: ${env.ANTHROPIC_MODEL}` });
  }
  return out;
}

export type ModelResolver = (choice: ModelChoice) => LanguageModel;

export function createModelResolver(env: Env, opts: { playbook?: Playbook } = {}): ModelResolver {
  const scripted = new ScriptedModel({ delayMs: env.SCRIPTED_MODEL_DELAY_MS, playbook: opts.playbook });
  return (choice) => {
    switch (choice.provider) {
      case "scripted":
        return scripted;
      case "openai-compatible":
        if (!env.OPENAI_BASE_URL && !env.OPENAI_API_KEY) break;
        return createOpenAICompatibleModel({
          baseURL: env.OPENAI_BASE_URL ?? "https://api.openai.com/v1",
          apiKey: env.OPENAI_API_KEY,
          model: choice.model,
        });
      case "anthropic":
        if (!env.ANTHROPIC_API_KEY) break;
        return createAnthropicModel({ baseURL: env.ANTHROPIC_BASE_URL, apiKey: env.ANTHROPIC_API_KEY, model: choice.model });
    }
    throw new AppError("MODEL_UNAVAILABLE", `Model provider "${choice.provider}" is not configured on this server`);
  };
}

/** Validates a choice against what this server offers. */
export function assertModelAvailable(env: Env, choice: ModelChoice): void {
  const ok = availableModels(env).some((m) => m.provider === choice.provider && (m.provider !== "scripted" || m.model === choice.model));
  if (!ok) throw new AppError("MODEL_UNAVAILABLE", `Model ${choice.provider}:${choice.model} is not available on this server`);
}
