import { describe, expect, it } from "vitest";
import type { ModelMessage, ModelRequest, ToolCall } from "../models/types";
import { RESUME_NOTICE } from "../runtime/config";
import { formatRuntimeContext } from "../runtime/context-registry";
import { formatIdentity, TEAM_IDENTITY } from "./identity";
import { teamPlaybook } from "./playbook";

// The keyless model copes with what the runtime does to a real model (pure: the playbook
// decides from the request alone). The scenario under a real restart is in scenario.test.ts.

const TOOLS = ["spawn_teammate", "send_message", "list_agents", "wait_agent", "interrupt_agent", "team_task_create", "team_task_list", "team_task_get", "team_task_update"];

// Written as the runtime writes it, so a change of either format fails here.
const identity = (role: "lead" | "teammate", name: string): ModelMessage => ({
  role: "user",
  text: formatRuntimeContext([{ name: TEAM_IDENTITY, text: formatIdentity({ role, name, teamTitle: "Team", teamId: "ses_team" }) }]),
});
const user = (text: string): ModelMessage => ({ role: "user", text });
let n = 0;
function step(text: string, ...calls: { toolName: string; input: unknown; output?: unknown; isError?: boolean }[]): ModelMessage[] {
  const toolCalls: ToolCall[] = calls.map((c) => ({ toolCallId: `c${++n}`, toolName: c.toolName, input: c.input }));
  const out: ModelMessage[] = [{ role: "assistant", text, toolCalls }];
  if (calls.length > 0) {
    out.push({
      role: "tool",
      results: calls.map((c, i) => ({ toolCallId: toolCalls[i]!.toolCallId, toolName: c.toolName, output: c.output ?? {}, isError: c.isError ?? false })),
    });
  }
  return out;
}
const request = (messages: ModelMessage[]): ModelRequest => ({
  system: "",
  messages,
  tools: TOOLS.map((name) => ({ name, description: "", inputSchema: { type: "object" } })),
  purpose: "step",
});
const calls = (messages: ModelMessage[]) => (teamPlaybook(request(messages)).toolCalls ?? []).map((c) => [c.toolName, c.input]);
const spawnOk = (name: string) => ({ name, role: "teammate", status: "running", description: "", context: "fresh", diagnostic: null });

describe("the keyless Lead", () => {
  it("forms its team when its first step was cut off (prompt, then the resume notice)", () => {
    const history = [identity("lead", "lead"), user("Build a tiny todo app"), { role: "assistant" as const, text: "I'll split", toolCalls: [] }, user(RESUME_NOTICE)];
    expect(calls(history).map(([tool, input]) => [tool, (input as { name: string }).name])).toEqual([
      ["spawn_teammate", "researcher"],
      ["spawn_teammate", "implementer"],
    ]);
  });

  it("spawns under another name after a failed spawn, and only what is missing", () => {
    const base = [identity("lead", "lead"), user("Build it")];
    const taken = step(
      "spawning",
      { toolName: "spawn_teammate", input: { name: "researcher" }, output: spawnOk("researcher") },
      { toolName: "spawn_teammate", input: { name: "implementer" }, output: { error: { code: "TEAM_MEMBER_NAME_TAKEN", message: "taken" } }, isError: true },
    );
    expect(calls([...base, ...taken]).map(([t, i]) => [t, (i as { name: string }).name])).toEqual([["spawn_teammate", "implementer-2"]]);

    const failedToo = step("again", { toolName: "spawn_teammate", input: { name: "implementer-2" }, output: { ...spawnOk("implementer-2"), status: "failed" } });
    expect(calls([...base, ...taken, ...failedToo]).map(([t, i]) => [t, (i as { name: string }).name])).toEqual([["spawn_teammate", "implementer-3"]]);

    // A spawn that never ran (no result but the runtime's INTERRUPTED) may use its name again.
    const cut = step("spawning", {
      toolName: "spawn_teammate",
      input: { name: "researcher" },
      output: { error: { code: "INTERRUPTED", message: "did not run" } },
      isError: true,
    });
    expect(calls([...base, ...cut, user(RESUME_NOTICE)]).map(([t, i]) => [t, (i as { name: string }).name])).toEqual([
      ["spawn_teammate", "researcher"],
      ["spawn_teammate", "implementer"],
    ]);

    const ok = step(
      "spawning",
      { toolName: "spawn_teammate", input: { name: "researcher" }, output: spawnOk("researcher") },
      { toolName: "spawn_teammate", input: { name: "implementer" }, output: spawnOk("implementer") },
    );
    expect(calls([...base, ...ok]).map(([t]) => t)).toEqual(["wait_agent"]);
  });
});

describe("keyless teammates", () => {
  it("never send again a message whose send_message result they have, even after a restart", () => {
    const task = { id: "task-1", revision: 3, subject: "Research: x", status: "completed" };
    const researcher = [
      identity("teammate", "researcher"),
      user("Research what is needed for: x"),
      ...step("create", { toolName: "team_task_create", input: {}, output: { ...task, revision: 1, status: "pending" } }),
      ...step("claim", { toolName: "team_task_update", input: {}, output: { ...task, revision: 2, status: "in_progress" } }),
      ...step(
        "complete",
        { toolName: "team_task_update", input: {}, output: task },
        { toolName: "list_agents", input: {}, output: { agents: [{ name: "lead", status: "running" }, { name: "implementer-2", status: "running" }] } },
      ),
    ];
    // The researcher messages the implementer the roster shows.
    expect(calls(researcher)).toEqual([["send_message", expect.objectContaining({ target: "implementer-2" })]]);
    // A send that was refused (the implementer failed meanwhile) is not repeated blindly.
    const refused = [
      ...researcher,
      ...step("send", { toolName: "send_message", input: {}, output: { error: { code: "TEAM_INVALID_TARGET", message: "failed" } }, isError: true }),
    ];
    expect(calls(refused).map(([t]) => t)).toEqual(["wait_agent", "list_agents"]);
    const sent = [...researcher, ...step("send", { toolName: "send_message", input: {}, output: { messageId: "m1", status: "accepted" } })];
    expect(calls(sent)).toEqual([]);
    expect(calls([...sent, { role: "assistant", text: "", toolCalls: [] }, user(RESUME_NOTICE)])).toEqual([]);

    const generic = [identity("teammate", "helper"), user("Tidy up"), ...step("report", { toolName: "send_message", input: {}, output: { messageId: "m2", status: "queued" } })];
    expect(calls([...generic, user(RESUME_NOTICE)])).toEqual([]);
    // A new task is new work: it reports again.
    expect(calls([...generic, user("Tidy up again")]).map(([t]) => t)).toEqual(["send_message"]);
  });
});
