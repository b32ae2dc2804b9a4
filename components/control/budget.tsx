"use client";

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { formatCost, spendTokens } from "~/shared/model-text";
import { BudgetInputSchema, type BudgetInput } from "~/shared/budget-input";
import type { MemberView, TeamState } from "../api-types";
import { modelKey, useModels } from "../models";
import { useTRPC } from "../trpc";
import { Button } from "../ui/button";
import { Field } from "../ui/field";

// The team budget (server/team/budget.ts): what is spent against the limit in the room's
// header, a banner when spending reached it (members stop at their next step and nothing runs),
// and, for owners and members, the form that sets, raises or removes it.

type Budget = TeamState["budget"];

const tokens = (n: number) => `${n.toLocaleString("en-US")} tokens`;

/** "1,234 of 5,000 tokens · $0.012 of $1.00": each limit that is set, against its spend. */
export function budgetFigures(b: Budget): string {
  const parts: string[] = [];
  if (b.limit.tokens !== null) parts.push(`${spendTokens(b.spent).toLocaleString("en-US")} of ${tokens(b.limit.tokens)}`);
  if (b.limit.costNanos !== null) parts.push(`${formatCost(b.spent.costNanos)} of ${formatCost(b.limit.costNanos)}`);
  return parts.join(" · ");
}

export function BudgetBar({ teamId, budget, canAct, members }: { teamId: string; budget: Budget; canAct: boolean; members: readonly MemberView[] }) {
  const [editing, setEditing] = useState(false);
  const { options, labelOf } = useModels();
  // Members whose model has no price: a cost budget does not see what they spend.
  const unpriced = [...new Set(members.filter((m) => options.find((o) => modelKey(o) === modelKey(m.model))?.price === null).map((m) => labelOf(m.model)))];
  const set = budget.limit.tokens !== null || budget.limit.costNanos !== null;
  return (
    <div className="budget" aria-label="team budget">
      {set ? <span className={budget.reached ? "budget-figures reached" : "budget-figures"}>Budget: {budgetFigures(budget)}</span> : <span className="muted">No budget</span>}
      {canAct && !editing && (
        <Button variant="link" onClick={() => setEditing(true)}>
          {set ? (budget.reached ? "Raise budget" : "Change budget") : "Set budget"}
        </Button>
      )}
      {editing && <BudgetForm teamId={teamId} budget={budget} onDone={() => setEditing(false)} />}
      {(editing || budget.limit.costNanos !== null) && unpriced.length > 0 && (
        <span className="muted">No price is set for {unpriced.join(", ")}: a cost budget counts their steps as $0.</span>
      )}
    </div>
  );
}

/** Shown while the budget is reached: the room says so, with the figures. */
export function BudgetBanner({ budget, canAct }: { budget: Budget; canAct: boolean }) {
  if (!budget.reached) return null;
  return (
    <p role="alert" className="budget-banner">
      <strong>Paused (budget)</strong> ({budgetFigures(budget)}): {stepNeedText(budget)} Running members stop at the end of their step and
      nothing more runs, their inboxes kept, until the budget is raised.
      {canAct ? " Raise it in the header to resume." : " An owner or member can raise it."}
    </p>
  );
}

/** What the step that did not fit needs beside what is left, when the stop recorded it. */
function stepNeedText(b: Budget): string {
  if (!b.need) return "the next step would cross it.";
  const left: string[] = [];
  if (b.limit.tokens !== null) left.push(tokens(Math.max(0, b.limit.tokens - spendTokens(b.spent))));
  if (b.limit.costNanos !== null) left.push(formatCost(Math.max(0, b.limit.costNanos - b.spent.costNanos)));
  const need = b.limit.tokens !== null ? `about ${tokens(b.need.tokens)}` : `about ${formatCost(b.need.costNanos)}`;
  return `the next step needs ${need}, and ${left.join(" and ")} ${left.length === 1 && left[0]!.endsWith("tokens") ? "are" : "is"} left.`;
}

function BudgetForm({ teamId, budget, onDone }: { teamId: string; budget: Budget; onDone: () => void }) {
  const trpc = useTRPC();
  const [tokenText, setTokenText] = useState(budget.limit.tokens === null ? "" : String(budget.limit.tokens));
  const [costText, setCostText] = useState(budget.limit.costNanos === null ? "" : String(budget.limit.costNanos / 1e9));
  const save = useMutation(trpc.team.setBudget.mutationOptions({ onSuccess: onDone }));
  const parsed = parseBudget(tokenText, costText);
  return (
    <form
      className="budget-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (typeof parsed !== "string") save.mutate({ teamId, ...parsed });
      }}
    >
      <Field label="Tokens">
        <input inputMode="numeric" value={tokenText} onChange={(e) => setTokenText(e.target.value)} placeholder="no limit" aria-label="token budget" />
      </Field>
      <Field label="Cost (USD)">
        <input inputMode="decimal" value={costText} onChange={(e) => setCostText(e.target.value)} placeholder="no limit" aria-label="cost budget in USD" />
      </Field>
      <Button type="submit" disabled={typeof parsed === "string" || save.isPending}>
        Save budget
      </Button>
      <Button variant="secondary" onClick={onDone}>
        Cancel
      </Button>
      {typeof parsed === "string" && (tokenText !== "" || costText !== "") && <span className="error">{parsed}</span>}
      {save.error && (
        <span role="alert" className="error">
          {save.error.message}
        </span>
      )}
    </form>
  );
}

/** The form's text as the procedure's input, or why it cannot be (empty: no limit of that kind). */
export function parseBudget(tokenText: string, costText: string): BudgetInput | string {
  const t = tokenText.replace(/[\s,_]/g, "");
  const c = costText.replace(/[\s$,]/g, "");
  if (t !== "" && !/^\d+$/.test(t)) return "Tokens must be a whole number";
  if (c !== "" && !/^\d*\.?\d+$/.test(c)) return "Cost must be an amount in USD, like 2.50";
  const parsed = BudgetInputSchema.safeParse({ tokens: t === "" ? null : Number(t), costUsd: c === "" ? null : Number(c) });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  return `${issue?.path[0] === "tokens" ? "Tokens" : "Cost"}: ${issue?.message ?? "invalid"}`;
}
