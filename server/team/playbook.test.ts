import { describe, expect, it } from "vitest";
import type { ModelMessage, ModelRequest, ToolCall } from "../models/types";
import { REPLY_CUT_OFF, RESUME_NOTICE, TURN_STOPPED } from "../runtime/config";
import { formatRuntimeContext } from "../models/runtime-context";
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

// Each window a restart or a race opens in the scenario, as the history the member then reads.
const interrupted = { output: { error: { code: "INTERRUPTED", message: "The tool did not run: the turn was interrupted." } }, isError: true };
const task = (id: string, revision: number, status: string, subject = `Implement: x`) => ({ id, revision, status, subject });
const mail = (from: string, text: string) => user(`Team message msg_${++n} from ${from}:\n${text}`);

describe("a refused claim", () => {
  const created = [
    identity("teammate", "implementer"),
    user("Implement: x"),
    ...step("create", { toolName: "team_task_create", input: {}, output: { ...task("task-2", 1, "pending"), blockedBy: ["task-1"] } }),
  ];
  const blocked = [
    ...created,
    ...step("claim", { toolName: "team_task_update", input: {}, output: { error: { code: "TEAM_TASK_BLOCKED", message: "waits for task-1" } }, isError: true }),
  ];

  it("refused as blocked waits, reads the task again and claims it at its current revision", () => {
    expect(calls(created)).toEqual([["team_task_update", { task_id: "task-2", expected_revision: 1, action: "claim" }]]);
    expect(calls(blocked).map(([t]) => t)).toEqual(["wait_agent"]);
    const woken = [...blocked, ...step("wait", { toolName: "wait_agent", input: {}, output: { timedOut: false } })];
    expect(calls(woken)).toEqual([["team_task_get", { task_id: "task-2" }]]);
    const read = [...woken, ...step("get", { toolName: "team_task_get", input: {}, output: task("task-2", 2, "pending") })];
    expect(calls(read)).toEqual([["team_task_update", { task_id: "task-2", expected_revision: 2, action: "claim" }]]);
  });

  it("with nobody else working ends the turn, and the message that wakes it leads to a fresh read", () => {
    const idle = [...blocked, ...step("wait", { toolName: "wait_agent", input: {}, output: { noProgress: true, hint: "" } })];
    expect(calls(idle)).toEqual([]);
    const reply = teamPlaybook(request(idle));
    const woken = [...idle, { role: "assistant" as const, text: reply.text, toolCalls: [] }, mail("researcher", "Research for task-1 is complete. You can start.")];
    expect(calls(woken)).toEqual([["team_task_get", { task_id: "task-2" }]]);
  });

  it("refused as stale, or cut off by a restart, reads the task before claiming again", () => {
    const stale = [
      ...created,
      ...step("claim", { toolName: "team_task_update", input: {}, output: { error: { code: "TEAM_TASK_STALE_REVISION", message: "now 2" } }, isError: true }),
    ];
    expect(calls(stale)).toEqual([["team_task_get", { task_id: "task-2" }]]);
    const cut = [...created, ...step("claim", { toolName: "team_task_update", input: {}, ...interrupted }), user(RESUME_NOTICE)];
    expect(calls(cut)).toEqual([["team_task_get", { task_id: "task-2" }]]);
    // A read before the restart is not trusted after it.
    const readThenCut = [...created, ...step("get", { toolName: "team_task_get", input: {}, output: task("task-2", 2, "pending") }), user(RESUME_NOTICE)];
    expect(calls(readThenCut)).toEqual([["team_task_get", { task_id: "task-2" }]]);
  });

  it("on an assigned task follows the same rules", () => {
    const assigned = [identity("teammate", "implementer"), user("Implement: x"), mail("lead", 'Assignment: task-4 "Implement: y". It waits for task-3.')];
    expect(calls(assigned)).toEqual([["team_task_get", { task_id: "task-4" }]]);
    const read = [...assigned, ...step("get", { toolName: "team_task_get", input: {}, output: task("task-4", 1, "pending") })];
    const refused = [...read, ...step("claim", { toolName: "team_task_update", input: {}, output: { error: { code: "TEAM_TASK_BLOCKED", message: "" } }, isError: true })];
    expect(calls(refused).map(([t]) => t)).toEqual(["wait_agent"]);
    const woken = [...refused, ...step("wait", { toolName: "wait_agent", input: {}, output: { timedOut: false } })];
    expect(calls(woken)).toEqual([["team_task_get", { task_id: "task-4" }]]);
  });
});

describe("a member interrupted after its work, before its report", () => {
  it("sends the report that never ran, once", () => {
    const done = [
      identity("teammate", "implementer"),
      user("Implement: x"),
      ...step("create", { toolName: "team_task_create", input: {}, output: task("task-2", 1, "pending") }),
      ...step("claim", { toolName: "team_task_update", input: {}, output: task("task-2", 2, "in_progress") }),
      ...step("write", { toolName: "workspace_write", input: {}, output: { path: "src/result.md", version: 1 } }),
      ...step("edit", { toolName: "workspace_edit", input: {}, output: { path: "src/result.md", version: 2 } }),
      ...step("complete", { toolName: "team_task_update", input: {}, output: task("task-2", 3, "completed") }),
    ];
    const cut = [...done, ...step("report", { toolName: "send_message", input: { target: "lead" }, ...interrupted }), user(RESUME_NOTICE)];
    expect(calls(cut)).toEqual([["send_message", expect.objectContaining({ target: "lead" })]]);
    const sent = [...cut, ...step("report", { toolName: "send_message", input: { target: "lead" }, output: { messageId: "m", status: "accepted" } })];
    expect(calls([...sent, user(RESUME_NOTICE)])).toEqual([]);
  });

  it("the researcher too: its message to the implementer is sent again, not waited on", () => {
    const done = [
      identity("teammate", "researcher"),
      user("Research what is needed for: x"),
      ...step("create", { toolName: "team_task_create", input: {}, output: task("task-1", 1, "pending", "Research: x") }),
      ...step("claim", { toolName: "team_task_update", input: {}, output: task("task-1", 2, "in_progress", "Research: x") }),
      ...step("write", { toolName: "workspace_write", input: {}, output: { path: "docs/research/notes.md", version: 1 } }),
      ...step(
        "complete",
        { toolName: "team_task_update", input: {}, output: task("task-1", 3, "completed", "Research: x") },
        { toolName: "list_agents", input: {}, output: { agents: [{ name: "implementer", status: "running" }] } },
      ),
      ...step("tell", { toolName: "send_message", input: { target: "implementer" }, ...interrupted }),
      user(RESUME_NOTICE),
    ];
    expect(calls(done)).toEqual([["send_message", expect.objectContaining({ target: "implementer" })]]);
  });
});

describe("the Lead between rounds", () => {
  const team = step(
    "spawning",
    { toolName: "spawn_teammate", input: { name: "researcher" }, output: spawnOk("researcher") },
    { toolName: "spawn_teammate", input: { name: "implementer" }, output: spawnOk("implementer") },
  );
  const answered = [identity("lead", "lead"), user("Build it"), ...team, { role: "assistant" as const, text: 'Final answer for "Build it":\n\ndone', toolCalls: [] }];
  const planned = [
    ...answered,
    user("Add due dates"),
    ...step("plan", { toolName: "team_task_create", input: {}, output: task("task-3", 1, "pending", "Research: Add due dates") }),
    ...step("plan", { toolName: "team_task_create", input: {}, output: task("task-4", 1, "pending", "Implement: Add due dates") }),
  ];

  it("assigns a created task whose assignment a restart cut off, and only what was not sent", () => {
    expect(calls(planned).map(([t, i]) => [t, (i as { target: string }).target])).toEqual([
      ["send_message", "researcher"],
      ["send_message", "implementer"],
    ]);
    const bothCut = [
      ...planned,
      ...step("assign", { toolName: "send_message", input: { target: "researcher" }, ...interrupted }, { toolName: "send_message", input: { target: "implementer" }, ...interrupted }),
      user(RESUME_NOTICE),
    ];
    expect(calls(bothCut).map(([t, i]) => [t, (i as { target: string }).target])).toEqual([
      ["send_message", "researcher"],
      ["send_message", "implementer"],
    ]);
    const oneCut = [
      ...planned,
      ...step(
        "assign",
        { toolName: "send_message", input: { target: "researcher" }, output: { messageId: "m", status: "accepted" } },
        { toolName: "send_message", input: { target: "implementer" }, ...interrupted },
      ),
      user(RESUME_NOTICE),
    ];
    expect(calls(oneCut).map(([t, i]) => [t, (i as { target: string }).target])).toEqual([["send_message", "implementer"]]);
  });

  it("answers the first of two prompts back to back, then takes up the second in the same reply", () => {
    // The second prompt started the turn after a restart cut the first round short.
    const board = { tasks: [task("task-1", 3, "completed", "Research: Build it"), task("task-2", 4, "completed", "Implement: Build it")] };
    const firstRound = [
      identity("lead", "lead"),
      user("Build it"),
      ...team,
      ...step("wait", { toolName: "wait_agent", input: {}, output: { error: { code: "INTERRUPTED", message: "" } }, isError: true }),
      user("Add due dates"),
      user(RESUME_NOTICE),
    ];
    // The first round goes on: the board is read again.
    expect(calls(firstRound).map(([t]) => t)).toEqual(["team_task_list"]);
    const done = [
      ...firstRound,
      ...step("board", { toolName: "team_task_list", input: {}, output: board }),
      mail("implementer", "task-2 is complete"),
      ...step("board", { toolName: "team_task_list", input: {}, output: board }),
      ...step("check", { toolName: "list_agents", input: {}, output: { agents: [] } }, { toolName: "workspace_list", input: {}, output: { files: [] } }),
    ];
    const reply = teamPlaybook(request(done));
    expect(reply.text).toMatch(/^Final answer for "Build it":/);
    expect(reply.text).toContain('New request: "Add due dates"');
    expect(reply.toolCalls).toEqual([{ toolName: "team_task_create", input: expect.objectContaining({ subject: "Research: Add due dates" }) }]);
  });

  it("answers again when a restart cut its answer off; an answered Lead redoes nothing", () => {
    const cut = [...answered.slice(0, -1), { role: "assistant" as const, text: `Final answer for "Build it":${REPLY_CUT_OFF}`, toolCalls: [] }];
    expect(calls([...cut, user(RESUME_NOTICE)]).map(([t]) => t)).toEqual(["team_task_list"]);
    // The prompt queued behind it may start the next turn before the notice: still not answered.
    expect(calls([...cut, user("Add due dates"), user(RESUME_NOTICE)]).map(([t]) => t)).toEqual(["team_task_list"]);
    expect(calls([...answered, mail("researcher", "late news")])).toEqual([]);
  });

  it("drops what a person stopped: the next prompt is the next round, not the stopped one", () => {
    const stopped = [identity("lead", "lead"), user("A long answer please"), { role: "assistant" as const, text: `Planning${REPLY_CUT_OFF}`, toolCalls: [] }, user(TURN_STOPPED)];
    expect(calls(stopped)).toEqual([]);
    const next = teamPlaybook(request([...stopped, user("Second prompt")]));
    expect(next.text).not.toContain("A long answer please");
    expect(next.toolCalls).toContainEqual({ toolName: "spawn_teammate", input: expect.objectContaining({ prompt: "Implement: Second prompt" }) });
  });

  it("wakes teammates with open work when nobody is working, and says so truthfully when that does not help", () => {
    const board = { tasks: [task("task-1", 3, "completed", "Research: Build it"), task("task-2", 2, "in_progress", "Implement: Build it")] };
    const idle = [
      identity("lead", "lead"),
      user("Build it"),
      ...team,
      ...step("wait", { toolName: "wait_agent", input: {}, output: { noProgress: true, hint: "" } }),
      ...step("board", { toolName: "team_task_list", input: {}, output: board }),
    ];
    expect(calls(idle)).toEqual([["send_message", expect.objectContaining({ target: "implementer", message: expect.stringMatching(/^Nudge: .*task-2/) })]]);
    let history = idle;
    for (let i = 0; i < 3; i++) {
      history = [
        ...history,
        ...step("nudge", { toolName: "send_message", input: { target: "implementer", message: "Nudge: task-2" }, output: { messageId: `m${i}`, status: "accepted" } }),
      ];
      expect(calls(history).map(([t]) => t)).toEqual(["wait_agent"]);
      history = [
        ...history,
        ...step("wait", { toolName: "wait_agent", input: {}, output: { noProgress: true, hint: "" } }),
        ...step("board", { toolName: "team_task_list", input: {}, output: board }),
      ];
    }
    const reply = teamPlaybook(request(history));
    expect(reply.toolCalls).toEqual([]);
    expect(reply.text).toMatch(/^Final answer for "Build it": the team could not finish/);
    expect(reply.text).toContain("task-2: in_progress");
  });
});

describe("the keyless Lead and the team's memory", () => {
  const withMemory = (messages: ModelMessage[]): ModelRequest => ({
    ...request(messages),
    tools: [...TOOLS, "workspace_list", "memory_search", "memory_propose"].map((name) => ({ name, description: "", inputSchema: { type: "object" } })),
  });
  const team = step(
    "spawning",
    { toolName: "spawn_teammate", input: { name: "researcher" }, output: spawnOk("researcher") },
    { toolName: "spawn_teammate", input: { name: "implementer" }, output: spawnOk("implementer") },
  );
  const board = { tasks: [task("task-1", 3, "completed", "Research: Plan the invoices launch"), task("task-2", 4, "completed", "Implement: Plan the invoices launch")] };
  const done = [identity("lead", "lead"), user("Plan the invoices launch"), ...team, mail("implementer", "task-2 is complete"), ...step("board", { toolName: "team_task_list", input: {}, output: board })];

  it("proposes one memory of the round beside its last checks, once across a restart, and says so in its answer", () => {
    const reply = teamPlaybook(withMemory(done));
    expect(reply.toolCalls?.map((c) => c.toolName)).toEqual(["list_agents", "workspace_list", "memory_propose"]);
    expect(reply.toolCalls?.[2]?.input).toEqual({ text: expect.stringMatching(/^"Plan the invoices launch" was done in two steps: task-1 .* by researcher .*task-2 by implementer/), tags: ["keyless"] });
    const checked = step(
      "check",
      { toolName: "list_agents", input: {}, output: { agents: [] } },
      { toolName: "workspace_list", input: {}, output: { files: [] } },
      { toolName: "memory_propose", input: {}, output: { id: "mem_1", status: "proposed", note: "" } },
    );
    const answer = teamPlaybook(withMemory([...done, ...checked]));
    expect(answer.text).toMatch(/^Final answer for "Plan the invoices launch":/);
    expect(answer.text).toContain("I proposed a memory of this work for the team; agents use it once a person approves it.");
    // A restart after the proposal: the board is read again, and the proposal is not made twice.
    const again = [...done, ...checked, user(RESUME_NOTICE), ...step("board", { toolName: "team_task_list", input: {}, output: board })];
    expect(teamPlaybook(withMemory(again)).toolCalls?.map((c) => c.toolName)).toEqual(["list_agents", "workspace_list"]);
  });

  it("looks a question about earlier work up in the memory first, and answers from what it found", () => {
    const asked = [identity("lead", "lead"), user("What did the team decide earlier about the invoices launch?")];
    // Without the Memory tools, a question forms a team as before.
    expect(calls(asked).map(([t]) => t)).toEqual(["spawn_teammate", "spawn_teammate"]);
    const search = teamPlaybook(withMemory(asked)).toolCalls;
    expect(search).toEqual([{ toolName: "memory_search", input: { query: "invoices or launch" } }]);
    const found = step("search", { toolName: "memory_search", input: {}, output: { memories: [{ id: "mem_1", text: "Invoices launch on the 1st.", tags: [] }] } });
    const reply = teamPlaybook(withMemory([...asked, ...found]));
    expect(reply.toolCalls).toEqual([]);
    expect(reply.text).toBe('From the team\'s memory (one memory matches "What did the team decide earlier about the invoices launch?"):\n\n- Invoices launch on the 1st. (mem_1)');
    // Nothing found: the team is formed for it, as without memory.
    const none = step("search", { toolName: "memory_search", input: {}, output: { memories: [] } });
    expect(teamPlaybook(withMemory([...asked, ...none])).toolCalls?.map((c) => c.toolName)).toEqual(["spawn_teammate", "spawn_teammate"]);
  });
});
