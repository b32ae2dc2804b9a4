import type { Db } from "../db/client";
import { Prisma } from "../db/generated/client";
import type { SqlRunner } from "../db/sql";
import type { SessionId } from "../ids";
import { costNanos, type Price } from "../models/catalog";
import { tokensOfChars } from "../models/estimate";
import type { Lease, SpendDelta } from "./session-log";

// Binding spending limits (SPEC.md §17, teams: team/budget.ts): before each step the runtime
// reserves the most the step can spend, its estimated input plus its output limit, and a step
// that does not fit does not start. A step's request is billed once its provider answers: its
// estimated input joins the session's spend at the first chunk (every step, with a limit or
// without, so a limit set later counts the requests being answered) and leaves the
// reservation; the reply replaces the estimate with its real usage and releases the rest.

/** The output reserved for (and, under a limit, asked of) a model that sets no limit of its own. */
export const DEFAULT_OUTPUT_RESERVE_TOKENS = 4_096;
/** A step with room for less output than this (or than its own limit, if smaller) does not start. */
export const MIN_STEP_OUTPUT_TOKENS = 256;

export interface StepNeed {
  /** The step's estimated input tokens, apart from the input it is about to claim (a compaction before it included). */
  inputTokens: number;
  /** The part of `inputTokens` its own request sends (system prompt, tools, history): billed as the step starts. */
  requestTokens: number;
  /** The most output tokens the step may ask for. */
  outputLimit: number;
  price: Price;
}

/** What is left under a limit (null: no limit of that kind). */
export interface Room {
  tokens: number | null;
  costNanos: number | null;
}

/**
 * "budget": the step does not fit and does not start. Otherwise the output limit to ask for
 * (null: the model's own), and, when no limit was found, `holds`: a condition the step's start
 * commit checks, that there is still none (a limit set since the read reaches this step: it
 * starts again, under the limit).
 */
export type StepRoom = "budget" | { maxOutputTokens: number | null; holds?: Prisma.Sql };

/**
 * Reserves a step's most against the session's spending limit. Its first read goes through
 * `reads` (beside the runtime context's, in one round trip); a session without a limit costs
 * nothing more. `need` is asked for only under a limit. A step that would fit but for other
 * steps in flight waits for them (until `signal` aborts: then it throws StepWaitAborted).
 */
export type StepReserver = (
  db: Db,
  sessionId: SessionId,
  lease: Lease,
  reads: SqlRunner,
  need: () => StepNeed,
  signal?: AbortSignal,
) => Promise<StepRoom>;

/** A step's wait for room ended because its driver is closing: the step did not start. */
export class StepWaitAborted extends Error {
  constructor() {
    super("aborted while waiting for room under the spending limit");
  }
}

/**
 * The output a step may ask for within `room`, or null when less than the minimum fits: its
 * whole output limit when that fits, else what is left after the input (the step's last reply
 * may be cut short rather than cross the limit).
 */
export function fitOutput(need: StepNeed, room: Room): number | null {
  let output = need.outputLimit;
  if (room.tokens !== null) output = Math.min(output, room.tokens - need.inputTokens);
  if (room.costNanos !== null) {
    const left = room.costNanos - costNanos(need.price, { inputTokens: need.inputTokens, outputTokens: 0 });
    // USD per million tokens = 1,000 nano-USD per token.
    const perToken = need.price.output * 1000;
    output = Math.min(output, perToken > 0 ? Math.floor(left / perToken) : left >= 0 ? output : -1);
  }
  return output >= Math.min(MIN_STEP_OUTPUT_TOKENS, need.outputLimit) ? output : null;
}

/** What a step that asks for `output` tokens may spend at most. */
export function reservationOf(need: StepNeed, output: number): { tokens: number; costNanos: number } {
  return { tokens: need.inputTokens + output, costNanos: costNanos(need.price, { inputTokens: need.inputTokens, outputTokens: output }) };
}

/**
 * A step's most: the request's estimated input (system prompt and tool list, `fixedChars`, and
 * the history; the input it claims is added by the reserver), a compaction before it when the
 * history is over its budget (a model call of its own, reading the history), and the model's
 * output limit.
 */
export function stepNeed(opts: {
  modelLimit: number | undefined;
  price: Price;
  fixedChars: number;
  historyTokens: number;
  compactionBudgetTokens: number;
}): StepNeed {
  const outputLimit = opts.modelLimit ?? DEFAULT_OUTPUT_RESERVE_TOKENS;
  const compaction = opts.historyTokens > opts.compactionBudgetTokens ? opts.historyTokens + outputLimit : 0;
  const requestTokens = tokensOfChars(opts.fixedChars) + opts.historyTokens;
  return { inputTokens: requestTokens + compaction, requestTokens, outputLimit, price: opts.price };
}

/** What a step's request is billed when its provider answers: its estimated input (and the runtime context sent with it). */
export function requestCharge(need: StepNeed, extraChars: number): SpendDelta {
  const inputTokens = need.requestTokens + tokensOfChars(extraChars);
  return { inputTokens, outputTokens: 0, cachedInputTokens: 0, costNanos: costNanos(need.price, { inputTokens, outputTokens: 0 }) };
}

/**
 * Bills a step's request as its provider starts answering: the estimate joins the session's
 * spend and leaves its reservation, under its lease.
 */
export function chargeStatement(sessionId: SessionId, lease: Lease, charge: SpendDelta): Prisma.Sql {
  return Prisma.sql`UPDATE sessions SET spent_input_tokens = spent_input_tokens + ${charge.inputTokens},
      spent_cost_nanos = spent_cost_nanos + ${charge.costNanos},
      reserved_tokens = GREATEST(reserved_tokens - ${charge.inputTokens}, 0),
      reserved_cost_nanos = GREATEST(reserved_cost_nanos - ${charge.costNanos}, 0)
    WHERE id = ${sessionId} AND lease_owner = ${lease.owner} AND lease_token = ${lease.token}`;
}

/** A step's usage less what its answer's start billed: what its reply adds to the spend (negative when the estimate was high). */
export function lessCharged(spend: SpendDelta, charged: SpendDelta | null): SpendDelta {
  if (!charged) return spend;
  return { ...spend, inputTokens: spend.inputTokens - charged.inputTokens, costNanos: spend.costNanos - charged.costNanos };
}

/** Drops the session's reservation (a step that did not start after all), under its lease. */
export async function releaseReservation(db: SqlRunner, sessionId: SessionId, lease: Lease): Promise<void> {
  await db.$executeRaw`UPDATE sessions SET reserved_tokens = 0, reserved_cost_nanos = 0
    WHERE id = ${sessionId} AND lease_owner = ${lease.owner} AND lease_token = ${lease.token}`;
}

