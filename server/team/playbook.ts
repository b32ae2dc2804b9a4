import {
  defaultPlaybook,
  DIRECTIVE_REPLY,
  readTail,
  RUNTIME_CONTEXT_PREFIX,
  toolDirectives,
  type Playbook,
  type ScriptedReply,
} from "../models/scripted";
import type { ModelMessage, ModelRequest } from "../models/types";
import { RESUME_NOTICE } from "../runtime/config";

// The keyless team scenario (spec section 11), played by the scripted model. Each member
// decides its next step from what any model would see: its runtime-context identity, the
// tool results it got and the messages it received. No hidden state.
//
//   lead:         spawn researcher + implementer → wait → check the board → … → list agents → answer
//   researcher:   create task-1 → claim → complete → message the implementer → done
//   implementer:  find the research task → create task-2 blocked by it → claim (blocked) → wait →
//                 claim once task-1 is completed → complete → message the lead → done

type Call = { toolName: string; input: unknown };
type Result = { toolName: string; output: unknown; isError: boolean };

interface Seen {
  role: "lead" | "teammate";
  name: string;
  /** The human prompt (lead) or the initial task (teammate). */
  goal: string;
  inputs: string[];
  /** The latest result of each tool, newest last. */
  results: Result[];
  /** Results of the last tool round (what the model just learned). */
  last: Result[];
  /** Every user message the member has seen (team mail included). */
  inputsSoFar: string[];
}

const TOOLS_NEEDED = ["spawn_teammate", "send_message", "wait_agent", "team_task_create", "team_task_update", "team_task_list"];

export const teamPlaybook: Playbook = (request) => {
  if (request.purpose === "summary" || !TOOLS_NEEDED.every((t) => request.tools.some((s) => s.name === t))) {
    return defaultPlaybook(request);
  }
  const seen = read(request);
  // "/tool" directives are run verbatim, and their results reported, by the plain playbook.
  const lastReply = request.messages.findLast((m) => m.role === "assistant");
  if (toolDirectives(seen.inputs).length > 0 || (seen.last.length > 0 && lastReply?.role === "assistant" && lastReply.text === DIRECTIVE_REPLY)) {
    return defaultPlaybook(request);
  }
  if (seen.role === "lead") return lead(seen);
  if (seen.name === "researcher") return researcher(seen);
  if (seen.name === "implementer") return implementer(seen);
  return genericTeammate(seen);
};

function read(request: ModelRequest): Seen {
  const { messages } = request;
  let role: Seen["role"] = "lead";
  let name = "lead";
  for (const m of messages) {
    if (m.role !== "user" || !m.text.startsWith(RUNTIME_CONTEXT_PREFIX)) continue;
    const who = /Role: (lead|teammate)\. Your name in the team is `([^`]+)`/.exec(m.text);
    if (who) {
      role = who[1] as Seen["role"];
      name = who[2]!;
    }
  }
  const humanish = messages.filter(
    (m): m is Extract<ModelMessage, { role: "user" }> => m.role === "user" && isPrompt(m.text),
  );
  const results: Result[] = [];
  for (const m of messages) if (m.role === "tool") results.push(...m.results);
  const { inputs, toolResults } = readTail(messages);
  const inputsSoFar = messages.flatMap((m) => (m.role === "user" ? [m.text] : []));
  return { role, name, goal: humanish.at(-1)?.text ?? "the task", inputs, results, last: toolResults, inputsSoFar };
}

/** A person's prompt (or a teammate's initial task), not context, team mail or a notice. */
const isPrompt = (t: string) => !t.startsWith(RUNTIME_CONTEXT_PREFIX) && !t.startsWith("Team message ") && t !== RESUME_NOTICE;

const say = (text: string, ...toolCalls: Call[]): ScriptedReply => ({ text, toolCalls });
const lastOf = (seen: Seen, tool: string) => [...seen.results].reverse().find((r) => r.toolName === tool && !r.isError);
const justGot = (seen: Seen, tool: string) => seen.last.find((r) => r.toolName === tool);
const short = (text: string, max = 80) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

interface TaskOut {
  id: string;
  revision: number;
  subject: string;
  status: string;
  ready?: boolean;
  blockedBy?: string[];
}
const tasksIn = (r: Result | undefined): TaskOut[] => ((r?.output as { tasks?: TaskOut[] } | undefined)?.tasks ?? []);
const taskIn = (r: Result | undefined): TaskOut | undefined => (r && !r.isError ? (r.output as TaskOut) : undefined);
const received = (seen: Seen) => seen.inputs.filter((t) => t.startsWith("Team message "));

function ack(seen: Seen): string {
  const mail = received(seen);
  return mail.length === 0 ? "" : `Noted ${mail.length === 1 ? "a message" : `${mail.length} messages`}: ${mail.map((m) => short(m, 100)).join(" / ")}. `;
}

function lead(seen: Seen): ScriptedReply {
  const spawned = seen.results.filter((r) => r.toolName === "spawn_teammate" && !r.isError).length;
  const human = seen.inputs.find(isPrompt);
  if (human && spawned === 0 && !seen.results.some((r) => r.toolName === "spawn_teammate")) {
    return say(
      `I'll split "${short(human)}" between a researcher and an implementer, then wait for both.`,
      {
        toolName: "spawn_teammate",
        input: {
          name: "researcher",
          description: "Finds what the implementation needs",
          context: "fresh",
          prompt: `Research what is needed for: ${human}`,
        },
      },
      {
        toolName: "spawn_teammate",
        input: {
          name: "implementer",
          description: "Builds the result once research is done",
          context: "fresh",
          prompt: `Implement: ${human}`,
        },
      },
    );
  }
  const board = justGot(seen, "team_task_list");
  if (justGot(seen, "list_agents")) {
    const tasks = tasksIn(lastOf(seen, "team_task_list"));
    const lines = tasks.map((t) => `- ${t.id} "${t.subject}": ${t.status} (revision ${t.revision})`);
    return say([`Final answer for "${short(seen.goal)}":`, "", "The researcher and the implementer both finished their tasks:", ...lines].join("\n"));
  }
  if (board) {
    const tasks = tasksIn(board);
    // Done when every task is completed and the implementer has reported back.
    const reported = seen.inputsSoFar.some((t) => /^Team message \S+ from implementer:/.test(t));
    if (tasks.length >= 2 && tasks.every((t) => t.status === "completed") && reported) {
      return say("Both tasks are completed. Checking the roster before I answer.", { toolName: "list_agents", input: {} });
    }
    const lastWait = lastOf(seen, "wait_agent")?.output as { noProgress?: boolean } | undefined;
    if (lastWait?.noProgress) {
      return say(`Nobody is working any more, but the board is not finished:\n${tasks.map((t) => `- ${t.id}: ${t.status}`).join("\n")}`);
    }
    return say(`${ack(seen)}Not done yet (${tasks.filter((t) => t.status === "completed").length}/${Math.max(tasks.length, 2)} tasks completed); waiting.`, {
      toolName: "wait_agent",
      input: { timeout_ms: 60_000 },
    });
  }
  if (justGot(seen, "spawn_teammate")) {
    return say("Both teammates are on it. Waiting for progress.", { toolName: "wait_agent", input: { timeout_ms: 60_000 } });
  }
  // Woken by a wait, a message or a new prompt: look at the board.
  return say(`${ack(seen)}Checking the board.`, { toolName: "team_task_list", input: {} });
}

function researcher(seen: Seen): ScriptedReply {
  const created = taskIn(lastOf(seen, "team_task_create"));
  const lastUpdate = taskIn(lastOf(seen, "team_task_update"));
  if (justGot(seen, "send_message")) return say(`${ack(seen)}Research is done and the implementer has my findings.`);
  if (!created) {
    return say("Starting the research: first a task on the board.", {
      toolName: "team_task_create",
      input: {
        subject: `Research: ${short(seen.goal.replace(/^Research what is needed for: /, ""), 120)}`,
        description: `Collect what the implementation of "${seen.goal}" needs.`,
        write_scopes: ["docs/research"],
      },
    });
  }
  if (!lastUpdate || lastUpdate.id !== created.id) {
    return say(`Claiming ${created.id}.`, {
      toolName: "team_task_update",
      input: { task_id: created.id, expected_revision: created.revision, action: "claim" },
    });
  }
  if (lastUpdate.status === "in_progress") {
    return say(
      `${ack(seen)}Findings: the goal needs a clear plan, the inputs it depends on, and a check that the result works. Marking ${created.id} complete.`,
      { toolName: "team_task_update", input: { task_id: created.id, expected_revision: lastUpdate.revision, action: "complete" } },
    );
  }
  return say(`${created.id} is complete; telling the implementer.`, {
    toolName: "send_message",
    input: {
      target: "implementer",
      message: `Research for ${created.id} is complete: plan first, list the inputs, verify the result. You can start.`,
    },
  });
}

function implementer(seen: Seen): ScriptedReply {
  const mine = taskIn(lastOf(seen, "team_task_create"));
  const update = justGot(seen, "team_task_update");
  const lastGood = taskIn(lastOf(seen, "team_task_update"));
  if (justGot(seen, "send_message")) return say(`${ack(seen)}Implementation is done and the lead knows.`);

  if (!mine) {
    const research = tasksIn(lastOf(seen, "team_task_list")).find((t) => t.subject.startsWith("Research"));
    if (research) {
      return say(`The research task is ${research.id}; adding the implementation task behind it.`, {
        toolName: "team_task_create",
        input: {
          subject: `Implement: ${short(seen.goal.replace(/^Implement: /, ""), 120)}`,
          description: `Build the result for "${seen.goal}" using the research.`,
          blocked_by: [research.id],
          write_scopes: ["src"],
        },
      });
    }
    if (justGot(seen, "team_task_list")) {
      return say("No research task yet; waiting for the researcher.", { toolName: "wait_agent", input: { timeout_ms: 60_000 } });
    }
    return say("Looking for the research task on the board.", { toolName: "team_task_list", input: {} });
  }
  if (lastGood?.id === mine.id && lastGood.status === "in_progress") {
    return say(`${ack(seen)}Built it following the research. Marking ${mine.id} complete.`, {
      toolName: "team_task_update",
      input: { task_id: mine.id, expected_revision: lastGood.revision, action: "complete" },
    });
  }
  if (lastGood?.id === mine.id && lastGood.status === "completed") {
    return say(`${ack(seen)}${mine.id} is complete; reporting to the lead.`, {
      toolName: "send_message",
      input: { target: "lead", message: `${mine.id} is complete: the implementation follows the research and has been checked.` },
    });
  }
  // Not claimed yet: try; when blocked, wait for a change, then re-read the board and retry.
  if (update?.isError || justGot(seen, "wait_agent")) {
    if (justGot(seen, "wait_agent")) {
      return say(`${ack(seen)}Something changed; re-reading my task.`, { toolName: "team_task_get", input: { task_id: mine.id } });
    }
    return say(`${mine.id} is blocked until the research is complete; waiting.`, { toolName: "wait_agent", input: { timeout_ms: 60_000 } });
  }
  const current = taskIn(justGot(seen, "team_task_get")) ?? mine;
  return say(`${ack(seen)}Trying to claim ${mine.id}.`, {
    toolName: "team_task_update",
    input: { task_id: mine.id, expected_revision: current.revision, action: "claim" },
  });
}

function genericTeammate(seen: Seen): ScriptedReply {
  if (justGot(seen, "send_message")) return say("Reported to the lead; done.");
  return say(`${ack(seen)}Working on: ${short(seen.goal, 120)}. Done; telling the lead.`, {
    toolName: "send_message",
    input: { target: "lead", message: `${seen.name} finished: ${short(seen.goal, 200)}` },
  });
}
