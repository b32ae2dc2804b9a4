// How models, prices and costs read, for the browser and for agents' tool descriptions. No
// imports (the UI loads it without zod): costs are nano-USD integers, prices USD per million
// tokens (server/models/catalog.ts).

/** "provider:model", the way a model is named to agents (spawn_teammate's `model`) and in forms. */
export function modelKey(c: { provider: string; model: string }): string {
  return `${c.provider}:${c.model}`;
}

/** "$3 in, $15 out per million tokens (cached $0.3)", "free", or no price: for the model lists of people and agents. */
const PROVIDER_NAMES: Record<string, string> = { anthropic: "Anthropic", "openai-compatible": "OpenAI-compatible" };

/** A model the server no longer offers (so it has no label), as people read it: "gpt-4o (OpenAI-compatible)". */
export function unlistedModelText(c: { provider: string; model: string }): string {
  if (c.provider === "scripted") return "Keyless scripted model";
  return `${c.model} (${PROVIDER_NAMES[c.provider] ?? c.provider})`;
}

export function priceText(price: { input: number; output: number; cachedInput?: number } | null): string {
  if (price === null) return "no price set, counted as $0";
  if (price.input === 0 && price.output === 0 && !price.cachedInput) return "free";
  const cached = price.cachedInput !== undefined && price.cachedInput !== price.input ? ` (cached $${price.cachedInput})` : "";
  return `$${price.input} in, $${price.output} out per million tokens${cached}`;
}

/** "$0.0123": enough digits to see small steps, no more. */
export function formatCost(nanos: number): string {
  const usd = nanos / 1e9;
  if (usd === 0) return "$0";
  if (usd >= 100) return `$${usd.toFixed(0)}`;
  if (usd >= 1) return `$${usd.toFixed(2)}`;
  if (usd >= 0.01) return `$${usd.toFixed(3)}`;
  if (usd < 0.0001) return "<$0.0001";
  return `$${usd.toFixed(4)}`;
}

/** The tokens a spend counts (what token budgets limit): input, cached included, plus output. */
export function spendTokens(s: { inputTokens: number; outputTokens: number }): number {
  return s.inputTokens + s.outputTokens;
}
