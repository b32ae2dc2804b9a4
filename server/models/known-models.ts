import type { ModelChoice } from "./choice";

// The models this code knows by id: each provider family's default, and each model's output
// limit, sent with every request as `maxOutputTokens` (an Anthropic model the SDK does not know
// is otherwise cut to 4,096 output tokens, with a warning). One list: env.ts takes the defaults
// from it, and README.md's model table is checked against it (known-models.test.ts; `npm run
// readme:models` rewrites the table). A model not listed here still works: a `MODELS` entry may
// give its `maxOutputTokens`.

export interface KnownModel {
  provider: Exclude<ModelChoice["provider"], "scripted">;
  model: string;
  label: string;
  /** The most output tokens one request may ask of it. */
  maxOutputTokens: number;
}

/** The first of each provider is its default (OPENAI_MODEL / ANTHROPIC_MODEL unset). */
export const KNOWN_MODELS: readonly KnownModel[] = [
  { provider: "anthropic", model: "claude-sonnet-4-5", label: "Claude Sonnet 4.5", maxOutputTokens: 64_000 },
  { provider: "anthropic", model: "claude-haiku-4-5", label: "Claude Haiku 4.5", maxOutputTokens: 64_000 },
  { provider: "anthropic", model: "claude-opus-4-1", label: "Claude Opus 4.1", maxOutputTokens: 32_000 },
  { provider: "openai-compatible", model: "gpt-4o-mini", label: "GPT-4o mini", maxOutputTokens: 16_384 },
  { provider: "openai-compatible", model: "gpt-4o", label: "GPT-4o", maxOutputTokens: 16_384 },
  { provider: "openai-compatible", model: "gpt-4.1", label: "GPT-4.1", maxOutputTokens: 32_768 },
  { provider: "openai-compatible", model: "gpt-4.1-mini", label: "GPT-4.1 mini", maxOutputTokens: 32_768 },
];

export function defaultModelOf(provider: KnownModel["provider"]): string {
  return KNOWN_MODELS.find((m) => m.provider === provider)!.model;
}

/**
 * The output limit a request to `choice` asks for: its `MODELS` entry's, else the known model's.
 * Unknown Anthropic models get the API's safe minimum (it requires one); unknown
 * OpenAI-compatible models ask for none (the server's own limit applies: a local model may
 * have a small context).
 */
export function maxOutputTokensOf(choice: ModelChoice, configured?: number): number | undefined {
  if (configured !== undefined) return configured;
  const known = KNOWN_MODELS.find((m) => m.provider === choice.provider && m.model === choice.model);
  if (known) return known.maxOutputTokens;
  return choice.provider === "anthropic" ? UNKNOWN_ANTHROPIC_MAX_OUTPUT_TOKENS : undefined;
}

export const UNKNOWN_ANTHROPIC_MAX_OUTPUT_TOKENS = 4_096;

/** README.md's model table, as `npm run readme:models` writes it. */
export function readmeModelTable(): string {
  const rows = KNOWN_MODELS.map((m, i) => {
    const isDefault = KNOWN_MODELS.findIndex((k) => k.provider === m.provider) === i;
    return `| ${m.provider} | \`${m.model}\`${isDefault ? " (default)" : ""} | ${m.label} | ${m.maxOutputTokens.toLocaleString("en-US")} |`;
  });
  return ["| provider | model id | label | output tokens per request |", "|---|---|---|---|", ...rows].join("\n");
}
