"use client";

import { useQuery } from "@tanstack/react-query";
import type { ModelChoice, ModelOption, Spend } from "./api-types";
import { useTRPC } from "./trpc";
import { formatCost, modelKey, priceText, spendTokens, unlistedModelText } from "~/shared/model-text";

// The models the server offers (labels and prices) and how models and spend read in the UI.

export { formatCost, modelKey, spendTokens };

/** A select option: "Claude Haiku — $1 in, $5 out per million tokens". */
export function optionText(o: ModelOption): string {
  return `${o.label} — ${priceText(o.price)}`;
}

/** The offered models, and a model's label (its id and provider when the server no longer offers it). */
export function useModels() {
  const trpc = useTRPC();
  const models = useQuery({ ...trpc.session.models.queryOptions(), staleTime: 60_000 });
  const options = models.data ?? [];
  const labelOf = (m: ModelChoice) => options.find((o) => modelKey(o) === modelKey(m))?.label ?? unlistedModelText(m);
  return { options, labelOf, loaded: models.isSuccess };
}

/** "1,234 tokens · $0.0123" */
export function spendText(s: Spend): string {
  return `${spendTokens(s).toLocaleString("en-US")} tokens · ${formatCost(s.costNanos)}`;
}
