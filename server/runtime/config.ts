import type { Env } from "../env";
import { RUNTIME_CONTEXT_LABEL } from "../models/runtime-context";

export interface RuntimeConfig {
  idleEvictMs: number;
  leaseTtlMs: number;
  recoveryIntervalMs: number;
  compactionBudgetTokens: number;
  maxStepsPerTurn: number;
  /**
   * How often streamed text is flushed to the log while a step streams: each flush is a
   * commit, so this bounds a streaming agent's commits per second whatever its token rate.
   * The reply's first text is flushed sooner (DELTA_FIRST_FLUSH_MS), so it shows at once.
   */
  deltaFlushMs: number;
  /** Shared by every agent, byte for byte (per-agent facts go in runtime context). */
  systemPrompt: string;
}

export const DEFAULT_SYSTEM_PROMPT = [
  "You are an agent in Agent Teams, working in a durable session that people watch live.",
  "Be direct and concise. Use the tools you are given when they help; when a tool returns an error, read its code and message and adjust.",
  `Messages that start with "${RUNTIME_CONTEXT_LABEL}" describe your current situation and supersede earlier ones.`,
].join("\n");

/** Steered into an agent whose turn a crash or shutdown cut short, so its work goes on. */
export const RESUME_NOTICE =
  "The server restarted while you were working, so your last turn was interrupted. Continue where you left off.";

/** Steered into an agent whose turn the team budget stopped; it runs once the budget is raised. */
export const BUDGET_RESUME_NOTICE =
  "Your last turn stopped because the team budget was reached. The budget has been raised, so continue where you left off.";

/**
 * Ends, in the model's history, a reply that was cut off while it streamed (a crash, a Stop):
 * the model reads that its text stopped short, not that it finished.
 */
export const REPLY_CUT_OFF = "\n\n[This reply was cut off before it finished.]";

/**
 * Follows, in the model's history, a turn a Stop or an interrupt ended (turn_end "aborted"):
 * what it was asked in that turn is withdrawn, unlike a turn a crash cut short, which goes on.
 */
export const TURN_STOPPED = "[This turn was stopped before it finished.]";

/** Every notice the runtime writes into a history: input from the runtime, never a person's goal. */
export const RUNTIME_NOTICES: ReadonlySet<string> = new Set([RESUME_NOTICE, BUDGET_RESUME_NOTICE]);

/** The first flush of a reply's text (later ones wait deltaFlushMs). */
export const DELTA_FIRST_FLUSH_MS = 50;

export function runtimeConfigFromEnv(env: Env): RuntimeConfig {
  return {
    idleEvictMs: env.AGENT_IDLE_EVICT_MS,
    leaseTtlMs: env.AGENT_LEASE_TTL_MS,
    recoveryIntervalMs: env.RUNTIME_RECOVERY_INTERVAL_MS,
    compactionBudgetTokens: env.COMPACTION_BUDGET_TOKENS,
    maxStepsPerTurn: env.MAX_STEPS_PER_TURN,
    deltaFlushMs: env.STREAM_FLUSH_MS,
    systemPrompt: DEFAULT_SYSTEM_PROMPT,
  };
}
