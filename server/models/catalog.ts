import { z } from "zod";
import { ModelChoiceSchema, type ModelChoice } from "./choice";

// The models this server offers, each with a label and a price (SPEC.md §15), and how a step's
// tokens become its cost. The list comes from the environment (`MODELS`, JSON); the keyless
// model is always offered. Prices are USD per million tokens, costs integers in nano-USD so
// sums are exact. No SDK imports: the env schema uses this. How models, prices and costs read
// is in shared/model-text.ts (no imports, so the browser loads no zod).

export const PriceSchema = z
  .object({
    /** USD per million input tokens not served from the cache. */
    input: z.number().nonnegative().max(10_000),
    output: z.number().nonnegative().max(10_000),
    /** USD per million cached input tokens; the input price when unset. */
    cachedInput: z.number().nonnegative().max(10_000).optional(),
  })
  .strict();
export type Price = z.infer<typeof PriceSchema>;

export const FREE: Price = { input: 0, output: 0 };

const CatalogEntrySchema = ModelChoiceSchema.extend({
  label: z.string().trim().min(1).max(100).optional(),
  price: PriceSchema.optional(),
  /** Output tokens one request may ask for; known models have theirs (known-models.ts). */
  maxOutputTokens: z.number().int().min(1).max(1_000_000).optional(),
}).strict();
export type CatalogEntry = z.infer<typeof CatalogEntrySchema>;

/** `MODELS` in the environment: a JSON array of {provider, model, label?, price?}. */
export const CatalogSchema = z.array(CatalogEntrySchema).max(100);

/** Parses the `MODELS` variable (JSON text), for the env schema. */
export const CatalogEnvSchema = z
  .string()
  .optional()
  .transform((text, ctx) => {
    if (text === undefined) return [];
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      ctx.addIssue({ code: "custom", message: "MODELS must be a JSON array of {provider, model, label, price}" });
      return z.NEVER;
    }
    const parsed = CatalogSchema.safeParse(json);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", message: `MODELS[${issue.path.join(".")}]: ${issue.message}` });
      return z.NEVER;
    }
    return parsed.data;
  });

/** An offered model; `price` null: a real model the price table has no entry for (its steps count as $0). */
export const ModelOptionSchema = ModelChoiceSchema.extend({ label: z.string(), price: PriceSchema.nullable() });
export type ModelOption = z.infer<typeof ModelOptionSchema>;

export function sameModel(a: ModelChoice, b: ModelChoice): boolean {
  return a.provider === b.provider && a.model === b.model;
}

/** nano-USD for one step's tokens; cached input tokens are part of inputTokens. */
export function costNanos(price: Price, usage: { inputTokens: number; outputTokens: number; cachedInputTokens?: number }): number {
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  // USD per million tokens = 1,000 nano-USD per token.
  const nanos = (usage.inputTokens - cached) * price.input + cached * (price.cachedInput ?? price.input) + usage.outputTokens * price.output;
  return Math.round(nanos * 1000);
}

/** What a session (or a team, summed) has spent: tokens as the providers reported them, cost in nano-USD. */
export const SpendSchema = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  /** The part of inputTokens served from a prompt cache. */
  cachedTokens: z.number().int().nonnegative(),
  costNanos: z.number().int().nonnegative(),
});
export type Spend = z.infer<typeof SpendSchema>;

export const NO_SPEND: Spend = { inputTokens: 0, outputTokens: 0, cachedTokens: 0, costNanos: 0 };

export function sumSpend(spends: readonly Spend[]): Spend {
  return spends.reduce(
    (a, b) => ({
      inputTokens: a.inputTokens + b.inputTokens,
      outputTokens: a.outputTokens + b.outputTokens,
      cachedTokens: a.cachedTokens + b.cachedTokens,
      costNanos: a.costNanos + b.costNanos,
    }),
    NO_SPEND,
  );
}
