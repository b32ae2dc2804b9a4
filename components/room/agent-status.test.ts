import { describe, expect, it } from "vitest";
import { agentStatus, AGENT_STATUSES, STATUS_HELP, statusSlug } from "./agent-status";

describe("agentStatus", () => {
  it("names every state in the one vocabulary, never an internal word", () => {
    expect(agentStatus({ status: "provisioning" })).toBe("Starting");
    expect(agentStatus({ status: "running", lastTurnEnd: "aborted" })).toBe("Working");
    expect(agentStatus({ status: "inactive" })).toBe("Idle");
    expect(agentStatus({ status: "idle", lastTurnEnd: "completed" })).toBe("Idle");
    expect(agentStatus({ status: "inactive", lastTurnEnd: "aborted" })).toBe("Stopped");
    expect(agentStatus({ status: "idle", lastTurnEnd: "error" })).toBe("Failed");
    expect(agentStatus({ status: "failed" })).toBe("Failed");
    expect(agentStatus({ status: "idle", lastTurnEnd: "budget" })).toBe("Paused (budget)");
    expect(agentStatus({ status: "idle", lastTurnEnd: "completed" }, { budgetReached: true })).toBe("Paused (budget)");
    // A member still working when the budget is reached is shown working until its step ends.
    expect(agentStatus({ status: "running" }, { budgetReached: true })).toBe("Working");
  });

  it("explains every status, each with its own style", () => {
    for (const s of AGENT_STATUSES) expect(STATUS_HELP[s].length).toBeGreaterThan(10);
    expect(new Set(AGENT_STATUSES.map(statusSlug)).size).toBe(AGENT_STATUSES.length);
    expect(statusSlug("Paused (budget)")).toBe("paused-budget");
  });
});
