import { parseScriptedSummary, readTail, toolDirectives } from "../../models/scripted";
import type { ModelMessage, ModelRequest } from "../../models/types";
import { REPLY_CUT_OFF, RUNTIME_NOTICES, TURN_STOPPED } from "../../runtime/config";
import { isRuntimeContext, parseRuntimeContext } from "../../models/runtime-context";
import { parseIdentity, TEAM_IDENTITY } from "../identity";
import { parseTeamMessage } from "../../../shared/message-format";

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
  /** The Lead's open request (null: none, or every one is answered). */
  request: string | null;
  /** The Lead's requests still unanswered after this round's (each is a round of its own, in order). */
  waiting: number;
  /** The Lead has answered every request it got: nothing is open. */
  answered: boolean;
  /** The tools the member has (the Memory tools may be absent). */
  tools: ReadonlySet<string>;
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
  // This round: the Lead's oldest unanswered request, or a teammate's newest assignment.
  const rounds = role === "lead" ? requestRounds(messages) : null;
  const start = rounds ? rounds.start : Math.max(0, messages.findLastIndex((m) => m.role === "user" && assignmentIn(m.text) !== null));
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
    goal: rounds?.goal ?? humanish.at(-1)?.text ?? "the task",
    inputs,
    results,
    last: toolResults,
    inputsSoFar,
    calls: callsIn(round),
    sentSinceInput,
    compacted: messages.some((m) => m.role === "user" && isSummary(m.text)),
    before: {
      calls: callsIn(earlier),
      answer: messages.slice(0, start + 1).flatMap((m) => (m.role === "assistant" && m.text.startsWith(FINAL_ANSWER) ? [m.text] : [])).at(-1) ?? null,
    },
    assigned: assignment,
    request: rounds && !rounds.answered ? (rounds.goal ?? null) : null,
    waiting: rounds?.waiting ?? 0,
    answered: rounds?.answered ?? false,
    tools: new Set(request.tools.map((t) => t.name)),
  };
}

/**
 * The Lead's requests pair with its answers in order: the k-th answer closes the k-th request
 * (a request queued behind another waits for it). The open round starts at its request, or at
 * the answer before it when the request came in while that round was still open. An answer the
 * compaction left without its request closes nothing, and neither does one cut off while it
 * streamed (the history says so): it is given again. A Stop or interrupt closes them all.
 */
function requestRounds(messages: ModelMessage[]): { start: number; goal: string | undefined; waiting: number; answered: boolean } {
  const open: { index: number; text: string }[] = [];
  let start = 0;
  let newest = -1;
  messages.forEach((m, i) => {
    if (m.role === "user" && isPrompt(m.text) && toolDirectives([m.text]).length === 0) {
      if (open.length === 0) start = i;
      open.push({ index: i, text: m.text });
      newest = i;
    }
    // A Stop or interrupt withdraws every request the stopped turn held.
    if (m.role === "user" && m.text === TURN_STOPPED && open.length > 0) {
      open.length = 0;
      start = i;
    }
    if (m.role === "assistant" && isAnswer(m.text) && open.length > 0 && !m.text.endsWith(REPLY_CUT_OFF)) {
      open.shift();
      start = i;
    }
  });
  const current = open[0];
  if (current) return { start, goal: current.text, waiting: open.length - 1, answered: false };
  // Everything is answered: the newest request's round, closed.
  const last = newest >= 0 ? (messages[newest] as { text: string }).text : undefined;
  return { start: Math.max(0, newest), goal: last, waiting: 0, answered: newest >= 0 };
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
/** The Lead's answer to a question about the team's earlier work. */
export const FROM_EARLIER = "From the team's earlier work";
/** The Lead's answer to a question about earlier work that the team's memory answers. */
export const FROM_MEMORY = "From the team's memory";
/** The Lead's answer to a question it has no finished result for. */
export const NO_RESULT_YET = "The team has no finished result";
/** What each of the Lead's answers to a request starts with. */
const ANSWERS = [FINAL_ANSWER, FROM_EARLIER, FROM_MEMORY, NO_RESULT_YET];
export const isAnswer = (text: string) => ANSWERS.some((a) => text.startsWith(a));
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
export const isPrompt = (t: string) =>
  !isRuntimeContext(t) && !isTeamMessage(t) && !RUNTIME_NOTICES.has(t) && t !== TURN_STOPPED && !isSummary(t);

export const isTeamMessage = (t: string) => parseTeamMessage(t) !== null;

const isSummary = (t: string) => parseScriptedSummary(t) !== null;
