import { parseScriptedSummary, readTail, toolDirectives } from "../../models/scripted";
import type { ModelMessage, ModelRequest } from "../../models/types";
import { RUNTIME_NOTICES } from "../../runtime/config";
import { isRuntimeContext, parseRuntimeContext } from "../../runtime/context-registry";
import { parseIdentity, TEAM_IDENTITY } from "../identity";
import { parseTeamMessage } from "../mailbox";

// What a member has seen, read from its history alone: who it is, this round's goal, its tool
// calls and their results, the messages it received.

export type Result = { toolName: string; output: unknown; isError: boolean };

export interface Seen {
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

export function read(request: ModelRequest): Seen {
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

export const FINAL_ANSWER = "Final answer for";
/** The Lead's assignment of a task to a teammate, by team message: `Assignment: task-3 …`. */
const ASSIGNMENT = /^Assignment: (task-\d+)\b/;
function assignmentIn(text: string): string | null {
  const message = parseTeamMessage(text);
  return message?.senderName === "lead" ? (ASSIGNMENT.exec(message.content.trim())?.[1] ?? null) : null;
}

export const ROLES = ["researcher", "implementer"] as const;
export type Role = (typeof ROLES)[number];
/** `implementer-2` plays the implementer: a retried spawn keeps its role. */
export const roleOf = (name: string): Role | null => ROLES.find((r) => name === r || name.startsWith(`${r}-`)) ?? null;

/** A person's prompt (or a teammate's initial task), not context, team mail, a runtime notice or a summary. */
export const isPrompt = (t: string) => !isRuntimeContext(t) && !isTeamMessage(t) && !RUNTIME_NOTICES.has(t) && !isSummary(t);

export const isTeamMessage = (t: string) => parseTeamMessage(t) !== null;

const isSummary = (t: string) => parseScriptedSummary(t) !== null;
