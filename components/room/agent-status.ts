import type { AgentStatus } from "~/server/runtime/sessions";
import type { TurnEndReason } from "~/server/runtime/events";

// One status vocabulary for agents, everywhere the room shows one, each with a short
// explanation (on hover and focus). Internal words (inactive, provisioning, aborted) never show.

export const AGENT_STATUSES = ["Starting", "Working", "Waiting for approval", "Waiting for an answer", "Idle", "Paused (budget)", "Stopped", "Failed"] as const;
export type AgentStatusName = (typeof AGENT_STATUSES)[number];

export const STATUS_HELP: Record<AgentStatusName, string> = {
  Starting: "Being set up: its session is being created.",
  Working: "Taking a turn now: thinking, writing or using a tool.",
  "Waiting for approval": "Paused until a person approves or denies a tool call it asked to make.",
  "Waiting for an answer": "Paused until a person answers the question it asked.",
  Idle: "Done for now: it starts again when a prompt or a team message arrives.",
  "Paused (budget)": "The team's budget is reached: nothing runs until a member raises it.",
  Stopped: "A person stopped its last turn. It starts again when a prompt or a team message arrives.",
  Failed: "Its last turn ended with an error, or it could not be started.",
};

/** What the room calls an agent's state, from its session status and how its last turn ended. */
export function agentStatus(
  agent: { status: AgentStatus; lastTurnEnd?: TurnEndReason | null },
  team: { budgetReached?: boolean } = {},
): AgentStatusName {
  if (agent.status === "provisioning") return "Starting";
  if (agent.status === "failed") return "Failed";
  if (agent.status === "running") return "Working";
  if (agent.status === "waiting_approval") return "Waiting for approval";
  if (agent.status === "waiting_answer") return "Waiting for an answer";
  if (team.budgetReached || agent.lastTurnEnd === "budget") return "Paused (budget)";
  if (agent.lastTurnEnd === "aborted") return "Stopped";
  if (agent.lastTurnEnd === "error") return "Failed";
  return "Idle";
}

/** The status's CSS modifier (`badge-working` …). */
export const statusSlug = (s: AgentStatusName) => s.toLowerCase().replace(/[^a-z]+/g, "-").replace(/-$/, "");
