import {
  defaultPlaybook,
  DIRECTIVE_REPLY,
  readTail,
  parseScriptedSummary,
  toolDirectives,
  type Playbook,
  type ScriptedReply,
} from "../models/scripted";
import type { ModelMessage, ModelRequest } from "../models/types";
import { RUNTIME_NOTICES } from "../runtime/config";
import { isRuntimeContext, parseRuntimeContext } from "../runtime/context-registry";
import { parseIdentity, TEAM_IDENTITY } from "./identity";
import { parseTeamMessage } from "./mailbox";

// The keyless team scenario (SPEC.md §11), played by the scripted model. Each member
// decides its next step from what any model would see: its runtime-context identity, the
// tool results it got and the messages it received. No hidden state.
//
//   lead:         spawn researcher + implementer → wait → check the board → … → list agents and
//                 files → answer (listing the files with their versions)
//   researcher:   create task-1 → claim → write its notes → complete (+ list agents) → message the
//                 implementer → done
//   implementer:  find the research task → create task-2 blocked by it → claim (blocked) → wait →
//                 claim once task-1 is completed → write the result → edit it → complete →
//                 message the lead → done
//
// Every later prompt to the Lead is a round of its own (its history from that prompt on): a
// question about the earlier result is answered from it directly; anything else is planned as
// new tasks (research, then an implementation behind it), assigned by message to the teammates
// the first round made, followed through and answered like the first. A teammate's round starts
// at the Lead's assignment. Runtime notices (a resume, a budget raised) never start a round.
//
// It copes with what the runtime does to a real model: a first step cut off by a restart (the
// history then holds the prompt and a resume notice) still forms the team; a spawn that failed
// is retried under another name (`implementer-2`, roles go by name prefix); a message whose
// send_message result is in the history is never sent again.

type Call = { toolName: string; input: unknown };
type Result = { toolName: string; output: unknown; isError: boolean };

interface Seen {
  role: "lead" | "teammate";
  /** Every tool call so far with its result (undefined while it has none). */
  calls: { toolName: string; input: unknown; result: Result | undefined }[];
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
  /** A send_message succeeded after the newest prompt or team message. */
  sentSinceInput: boolean;
  /** Part of the history is only a compaction summary now (its tool calls are gone). */
  compacted: boolean;
  /** What came before this round: its tool calls (the team's spawns) and the last final answer. */
  before: { calls: Seen["calls"]; answer: string | null };
  /** The task this round's assignment names (a teammate after the first round). */
  assigned: string | null;
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
  const role = roleOf(seen.name);
  if (role && seen.assigned) return assignedTask(seen, role, seen.assigned);
  if (role === "researcher") return researcher(seen);
  if (role === "implementer") return implementer(seen);
  return genericTeammate(seen);
};

function read(request: ModelRequest): Seen {
  const { messages } = request;
  let role: Seen["role"] = "lead";
  let name = "lead";
  for (const m of messages) {
    if (m.role !== "user" || !isRuntimeContext(m.text)) continue;
    const identity = parseRuntimeContext(m.text)?.find((section) => section.name === TEAM_IDENTITY);
    // A snapshot whose sections do not parse (a team title that mimics a section's end) still
    // holds the identity line.
    const who = parseIdentity(identity?.text ?? m.text);
    if (who) ({ role, name } = who);
  }
  // This round: from the Lead's newest prompt, or a teammate's newest assignment.
  const start = Math.max(
    0,
    messages.findLastIndex((m) => m.role === "user" && (role === "lead" ? isPrompt(m.text) && toolDirectives([m.text]).length === 0 : assignmentIn(m.text) !== null)),
  );
  const round = messages.slice(start);
  const humanish = round.filter((m): m is Extract<ModelMessage, { role: "user" }> => m.role === "user" && isPrompt(m.text));
  const results: Result[] = [];
  for (const m of round) if (m.role === "tool") results.push(...m.results);
  const { inputs, toolResults } = readTail(messages);
  const inputsSoFar = round.flatMap((m) => (m.role === "user" ? [m.text] : []));
  let sentSinceInput = false;
  for (const m of round) {
    if (m.role === "user" && (isPrompt(m.text) || isTeamMessage(m.text))) sentSinceInput = false;
    if (m.role === "tool" && m.results.some((r) => r.toolName === "send_message" && !r.isError)) sentSinceInput = true;
  }
  const earlier = messages.slice(0, start);
  const assignment = round[0]?.role === "user" ? assignmentIn(round[0].text) : null;
  return {
    role,
    name,
    goal: humanish.at(-1)?.text ?? "the task",
    inputs,
    results,
    last: toolResults,
    inputsSoFar,
    calls: callsIn(round),
    sentSinceInput,
    compacted: messages.some((m) => m.role === "user" && isSummary(m.text)),
    before: {
      calls: callsIn(earlier),
      answer: earlier.flatMap((m) => (m.role === "assistant" && m.text.startsWith(FINAL_ANSWER) ? [m.text] : [])).at(-1) ?? null,
    },
    assigned: assignment,
  };
}

/** Every tool call in `messages` with its result (undefined while it has none). */
function callsIn(messages: ModelMessage[]): Seen["calls"] {
  const byId = new Map<string, Result>();
  for (const m of messages) if (m.role === "tool") for (const r of m.results) byId.set(r.toolCallId, r);
  return messages.flatMap((m) =>
    m.role === "assistant" ? m.toolCalls.map((c) => ({ toolName: c.toolName, input: c.input, result: byId.get(c.toolCallId) })) : [],
  );
}

const FINAL_ANSWER = "Final answer for";
/** The Lead's assignment of a task to a teammate, by team message: `Assignment: task-3 …`. */
const ASSIGNMENT = /^Assignment: (task-\d+)\b/;
function assignmentIn(text: string): string | null {
  const message = parseTeamMessage(text);
  return message?.senderName === "lead" ? (ASSIGNMENT.exec(message.content.trim())?.[1] ?? null) : null;
}

const ROLES = ["researcher", "implementer"] as const;
type Role = (typeof ROLES)[number];
/** `implementer-2` plays the implementer: a retried spawn keeps its role. */
const roleOf = (name: string): Role | null => ROLES.find((r) => name === r || name.startsWith(`${r}-`)) ?? null;
const MAX_SPAWN_TRIES = 3;

const nameOf = (input: unknown) => (typeof input === "object" && input !== null && "name" in input ? String(input.name) : "");
const statusOf = (r: Result) => (r.output as { status?: string } | null)?.status;
const isInterrupted = (r: Result) => r.isError && (r.output as { error?: { code?: string } } | null)?.error?.code === "INTERRUPTED";

/**
 * Who the Lead still has to spawn: each role without a teammate that came up, under the first
 * name not yet refused (a spawn that never ran, cut off by a restart, may use its name again).
 */
function spawnsNeeded(seen: Seen): { role: Role; name: string }[] {
  const spawns = seen.calls.filter((c) => c.toolName === "spawn_teammate");
  const out: { role: Role; name: string }[] = [];
  for (const role of ROLES) {
    const mine = spawns.filter((c) => roleOf(nameOf(c.input)) === role);
    if (mine.some((c) => c.result && !c.result.isError && statusOf(c.result) !== "failed")) continue;
    const refused = new Set(mine.filter((c) => c.result && !isInterrupted(c.result)).map((c) => nameOf(c.input)));
    const name = [role, ...Array.from({ length: MAX_SPAWN_TRIES - 1 }, (_, i) => `${role}-${i + 2}`)].find((n) => !refused.has(n));
    if (name) out.push({ role, name });
  }
  return out;
}

/** A person's prompt (or a teammate's initial task), not context, team mail, a runtime notice or a summary. */
const isPrompt = (t: string) => !isRuntimeContext(t) && !isTeamMessage(t) && !RUNTIME_NOTICES.has(t) && !isSummary(t);

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
const isTeamMessage = (t: string) => parseTeamMessage(t) !== null;
type FileOut = { path: string; version: number; by: string };
const filesIn = (r: Result | undefined): FileOut[] => ((r?.output as { files?: FileOut[] } | undefined)?.files ?? []);
/** The version a successful workspace change reported, if the last one of `tool` succeeded. */
const changed = (seen: Seen, tool: string) => (lastOf(seen, tool)?.output as { path: string; version: number } | undefined) ?? null;

/** Where each role puts its work: inside its task's write scope (SPEC.md §14). */
export const SCENARIO_FILES = { notes: "docs/research/notes.md", result: "src/result.md" } as const;
const isSummary = (t: string) => parseScriptedSummary(t) !== null;
const received = (seen: Seen) => seen.inputs.filter(isTeamMessage);

function ack(seen: Seen): string {
  // Said as a person would: who wrote and what, not the message's id.
  const mail = received(seen).flatMap((m) => {
    const parsed = parseTeamMessage(m);
    return parsed ? [`${parsed.senderName}: ${short(parsed.content, 100)}`] : [];
  });
  return mail.length === 0 ? "" : `Noted ${mail.length === 1 ? "a message" : `${mail.length} messages`} from ${mail.join(" / ")}. `;
}

const SPAWN_BRIEF: Record<Role, { description: string; prompt: (goal: string) => string }> = {
  researcher: { description: "Finds what the implementation needs", prompt: (goal) => `Research what is needed for: ${goal}` },
  implementer: { description: "Builds the result once research is done", prompt: (goal) => `Implement: ${goal}` },
};

function lead(seen: Seen): ScriptedReply {
  // A later prompt to a team that exists: a round of follow-up work (or an answer).
  const team = teammatesOf(seen.before.calls);
  if (team.researcher && team.implementer) return followUp(seen, { researcher: team.researcher, implementer: team.implementer });
  // The team is formed from the person's prompt, wherever it is in the history: a first step
  // cut off by a restart leaves the prompt behind the resume notice.
  // A prompt of "/tool" lines is a person driving tools by hand, not a goal for a team.
  const human = seen.inputsSoFar.filter((t) => isPrompt(t) && toolDirectives([t]).length === 0).at(-1);
  // After a compaction the spawn calls are summarised away: the team exists already.
  const needed = human && !seen.compacted ? spawnsNeeded(seen) : [];
  if (human && needed.length > 0) {
    const retry = seen.calls.some((c) => c.toolName === "spawn_teammate" && roleOf(nameOf(c.input)) && c.result && !isInterrupted(c.result));
    const intro = retry
      ? `Spawning again: ${needed.map((n) => n.name).join(" and ")}.`
      : `I'll split "${short(human)}" between a researcher and an implementer, then wait for both.`;
    return say(
      intro,
      ...needed.map(({ role, name }) => ({
        toolName: "spawn_teammate",
        input: { name, description: SPAWN_BRIEF[role].description, context: "fresh", prompt: SPAWN_BRIEF[role].prompt(human) },
      })),
    );
  }
  if (justGot(seen, "spawn_teammate")) {
    return say("Both teammates are on it. Waiting for progress.", { toolName: "wait_agent", input: { timeout_ms: 60_000 } });
  }
  return followThrough(seen, null);
}

/** Each role's teammate that came up in `calls` (the newest, when a spawn was retried). */
function teammatesOf(calls: Seen["calls"]): Partial<Record<Role, string>> {
  const out: Partial<Record<Role, string>> = {};
  for (const c of calls) {
    const role = roleOf(nameOf(c.input));
    if (c.toolName === "spawn_teammate" && role && c.result && !c.result.isError && statusOf(c.result) !== "failed") out[role] = nameOf(c.input);
  }
  return out;
}

const QUESTION = /\?\s*$|^(?:from [^:\n]*:\s*)?(?:what|why|how|which|who|where|when|can|could|does|do|did|is|are|was|were)\b/i;

/**
 * A later prompt: a question about the earlier result is answered from it; anything else
 * becomes new tasks on the board (task-3, task-4 …), assigned to the teammates by message,
 * followed through and answered.
 */
function followUp(seen: Seen, team: Record<Role, string>): ScriptedReply {
  const request = seen.goal;
  if (QUESTION.test(request.trim()) && seen.calls.length === 0) {
    const earlier = seen.before.answer?.split("\n").slice(1).join("\n").trim();
    return say(
      earlier
        ? `From the team's earlier work (nothing new needed for this):\n\n${earlier}`
        : `The team has no finished result to answer "${short(request)}" from yet. Send it as a request and I'll plan it.`,
    );
  }
  const created = seen.calls.flatMap((c) => (c.toolName === "team_task_create" && c.result && !c.result.isError ? [taskIn(c.result)!] : []));
  const research = created.find((t) => t.subject.startsWith("Research"));
  const build = created.find((t) => t.subject.startsWith("Implement"));
  const goal = short(request.replace(/^From [^:\n]*:\s*/, ""), 120);
  if (!research) {
    return say(`New request: "${goal}". Planning it on the board, research first.`, {
      toolName: "team_task_create",
      input: { subject: `Research: ${goal}`, description: `Collect what "${goal}" needs.`, write_scopes: ["docs/research"] },
    });
  }
  if (!build) {
    return say(`${research.id} is on the board; the implementation goes behind it.`, {
      toolName: "team_task_create",
      input: { subject: `Implement: ${goal}`, description: `Build "${goal}" using ${research.id}.`, blocked_by: [research.id], write_scopes: ["src"] },
    });
  }
  if (!seen.calls.some((c) => c.toolName === "send_message")) {
    return say(
      `Assigning ${research.id} to ${team.researcher} and ${build.id} to ${team.implementer}.`,
      { toolName: "send_message", input: { target: team.researcher, message: `Assignment: ${research.id} "${research.subject}". Write your notes under docs/research, then tell ${team.implementer}.` } },
      { toolName: "send_message", input: { target: team.implementer, message: `Assignment: ${build.id} "${build.subject}". It waits for ${research.id}; put the result under src, then tell me.` } },
    );
  }
  if (justGot(seen, "send_message")) return say("Both are assigned. Waiting for progress.", { toolName: "wait_agent", input: { timeout_ms: 60_000 } });
  return followThrough(seen, [research.id, build.id]);
}

/**
 * Waits for the round's tasks (`ids`; null: every task on the board) to be completed and the
 * implementer to report, then checks the roster and the files and answers.
 */
function followThrough(seen: Seen, ids: string[] | null): ScriptedReply {
  const mine = (r: Result | undefined) => tasksIn(r).filter((t) => ids === null || ids.includes(t.id));
  if (justGot(seen, "list_agents")) {
    const lines = mine(lastOf(seen, "team_task_list")).map((t) => `- ${t.id} "${t.subject}": ${t.status} (revision ${t.revision})`);
    const files = filesIn(lastOf(seen, "workspace_list")).map((f) => `- ${f.path} (version ${f.version}, by ${f.by})`);
    return say(
      [
        `${FINAL_ANSWER} "${short(seen.goal)}":`,
        "",
        ids === null ? "The researcher and the implementer both finished their tasks:" : "The researcher and the implementer finished the new tasks:",
        ...lines,
        "",
        ...(files.length > 0 ? ["Files in the team workspace:", ...files] : ["The team workspace is empty."]),
      ].join("\n"),
    );
  }
  const board = justGot(seen, "team_task_list");
  if (board) {
    const tasks = mine(board);
    // Done when every task is completed and the implementer has reported back.
    const reported = seen.inputsSoFar.some((t) => roleOf(parseTeamMessage(t)?.senderName ?? "") === "implementer");
    if (tasks.length >= 2 && tasks.every((t) => t.status === "completed") && reported) {
      return say(
        "Both tasks are completed. Checking the roster and the files before I answer.",
        { toolName: "list_agents", input: {} },
        { toolName: "workspace_list", input: {} },
      );
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
  // Woken by a wait, a message or a new prompt: look at the board.
  return say(`${ack(seen)}Checking the board.`, { toolName: "team_task_list", input: {} });
}

/** The newest active implementer on the roster (a retried spawn may have renamed it). */
function implementerName(seen: Seen): string {
  const agents = (lastOf(seen, "list_agents")?.output as { agents?: { name: string; status: string }[] } | undefined)?.agents ?? [];
  return agents.filter((a) => roleOf(a.name) === "implementer" && a.status !== "failed" && a.status !== "provisioning").at(-1)?.name ?? "implementer";
}

function researcher(seen: Seen): ScriptedReply {
  const created = taskIn(lastOf(seen, "team_task_create"));
  const lastUpdate = taskIn(lastOf(seen, "team_task_update"));
  // A message that was sent stays sent (even when a restart came after it): never again.
  if (lastOf(seen, "send_message")) return say(`${ack(seen)}Research is done and the implementer has my findings.`);
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
  const notes = changed(seen, "workspace_write");
  if (lastUpdate.status === "in_progress" && !notes) {
    return say(`${ack(seen)}Writing my findings to ${SCENARIO_FILES.notes}.`, {
      toolName: "workspace_write",
      input: { path: SCENARIO_FILES.notes, content: researchNotes(seen.goal) },
    });
  }
  if (lastUpdate.status === "in_progress") {
    return say(
      `${ack(seen)}Findings are in ${notes!.path} (version ${notes!.version}): a clear plan, the inputs it depends on, and a check that the result works. Marking ${created.id} complete.`,
      { toolName: "team_task_update", input: { task_id: created.id, expected_revision: lastUpdate.revision, action: "complete" } },
      { toolName: "list_agents", input: {} },
    );
  }
  // The implementer the roster showed could not be messaged (failed, or not there yet): wait
  // for the team to change, look again, then send.
  if (justGot(seen, "send_message")?.isError) {
    return say(
      "The implementer is not reachable yet; waiting for the team to change.",
      { toolName: "wait_agent", input: { timeout_ms: 60_000 } },
      { toolName: "list_agents", input: {} },
    );
  }
  return say(`${created.id} is complete; telling the implementer.`, {
    toolName: "send_message",
    input: {
      target: implementerName(seen),
      message: `Research for ${created.id} is complete (notes in ${SCENARIO_FILES.notes}): plan first, list the inputs, verify the result. You can start.`,
    },
  });
}

function implementer(seen: Seen): ScriptedReply {
  const mine = taskIn(lastOf(seen, "team_task_create"));
  const update = justGot(seen, "team_task_update");
  const lastGood = taskIn(lastOf(seen, "team_task_update"));
  if (lastOf(seen, "send_message")) return say(`${ack(seen)}Implementation is done and the lead knows.`);

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
  if (lastGood?.id === mine.id && lastGood.status === "in_progress" && !changed(seen, "workspace_write")) {
    return say(`${ack(seen)}Building it: a first draft of ${SCENARIO_FILES.result}.`, {
      toolName: "workspace_write",
      input: { path: SCENARIO_FILES.result, content: resultDraft(seen.goal) },
    });
  }
  if (lastGood?.id === mine.id && lastGood.status === "in_progress" && !changed(seen, "workspace_edit")) {
    return say(`${ack(seen)}Checked the draft against the research; marking it checked.`, {
      toolName: "workspace_edit",
      input: { path: SCENARIO_FILES.result, old_text: DRAFT_STATUS, new_text: CHECKED_STATUS },
    });
  }
  if (lastGood?.id === mine.id && lastGood.status === "in_progress") {
    const result = changed(seen, "workspace_edit")!;
    return say(`${ack(seen)}Built it following the research: ${result.path} is at version ${result.version}. Marking ${mine.id} complete.`, {
      toolName: "team_task_update",
      input: { task_id: mine.id, expected_revision: lastGood.revision, action: "complete" },
    });
  }
  if (lastGood?.id === mine.id && lastGood.status === "completed") {
    return say(`${ack(seen)}${mine.id} is complete; reporting to the lead.`, {
      toolName: "send_message",
      input: { target: "lead", message: `${mine.id} is complete: ${SCENARIO_FILES.result} follows the research and has been checked.` },
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

/**
 * A task the Lead assigned after the first round: read it, claim it (waiting while it is
 * blocked), write the work into its own file, complete it, and tell who needs to know: the
 * researcher the implementer, the implementer the Lead.
 */
function assignedTask(seen: Seen, role: Role, taskId: string): ScriptedReply {
  const file = role === "researcher" ? `docs/research/${taskId}.md` : `src/${taskId}.md`;
  if (lastOf(seen, "send_message")) return say(`${ack(seen)}${taskId} is done and reported.`);
  const update = justGot(seen, "team_task_update");
  const mine = taskIn(lastOf(seen, "team_task_update"));
  if (mine?.status === "completed") {
    const target = role === "researcher" ? implementerName(seen) : "lead";
    const sent = justGot(seen, "send_message");
    if (sent?.isError) return say(`${target} is not reachable yet; waiting.`, { toolName: "wait_agent", input: { timeout_ms: 60_000 } }, { toolName: "list_agents", input: {} });
    return say(`${taskId} is complete; telling ${target}.`, {
      toolName: "send_message",
      input: { target, message: `${taskId} is complete (${file}).${role === "researcher" ? " You can start." : ""}` },
    });
  }
  if (mine?.status === "in_progress" && !changed(seen, "workspace_write")) {
    return say(`${ack(seen)}Working on ${taskId}: writing ${file}.`, {
      toolName: "workspace_write",
      input: { path: file, content: `# ${taskId}\n\n${role === "researcher" ? "Notes: plan, inputs, how to check it." : "Result, built following the research and checked."}\n` },
    });
  }
  if (mine?.status === "in_progress") {
    return say(`${ack(seen)}${file} is written; marking ${taskId} complete.`, {
      toolName: "team_task_update",
      input: { task_id: taskId, expected_revision: mine.revision, action: "complete" },
    });
  }
  // Not claimed yet: read it, claim it; blocked, wait for a change and read it again.
  if (update?.isError && !justGot(seen, "wait_agent")) {
    return say(`${taskId} is not ready yet; waiting.`, { toolName: "wait_agent", input: { timeout_ms: 60_000 } });
  }
  const current = justGot(seen, "team_task_get");
  if (!current || current.isError) return say(`${ack(seen)}Reading ${taskId}.`, { toolName: "team_task_get", input: { task_id: taskId } });
  return say(`Claiming ${taskId}.`, { toolName: "team_task_update", input: { task_id: taskId, expected_revision: taskIn(current)!.revision, action: "claim" } });
}

const DRAFT_STATUS = "Status: draft";
const CHECKED_STATUS = "Status: checked against the research";

function researchNotes(goal: string): string {
  return [
    `# Research notes`,
    "",
    `For: ${short(goal.replace(/^Research what is needed for: /, ""), 200)}`,
    "",
    "- Start from a clear plan: what the result must do, and for whom.",
    "- List the inputs it depends on before building anything.",
    "- Decide how to check that the result works, and check it.",
    "",
  ].join("\n");
}

function resultDraft(goal: string): string {
  return [
    `# Result`,
    "",
    `${short(goal.replace(/^Implement: /, ""), 200)}`,
    "",
    DRAFT_STATUS,
    "",
    `Built following ${SCENARIO_FILES.notes}: plan, inputs, verification.`,
    "",
  ].join("\n");
}

function genericTeammate(seen: Seen): ScriptedReply {
  if (seen.sentSinceInput) return say("Reported to the lead; done.");
  return say(`${ack(seen)}Working on: ${short(seen.goal, 120)}. Done; telling the lead.`, {
    toolName: "send_message",
    input: { target: "lead", message: `${seen.name} finished: ${short(seen.goal, 200)}` },
  });
}
