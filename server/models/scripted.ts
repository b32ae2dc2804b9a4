import { abortError } from "../abortable";
import { isRuntimeContext, RUNTIME_CONTEXT_HEADER } from "./runtime-context";
import { parseHumanPrompt } from "./human-prompt";
import { estimateOutputTokens, estimateUsage } from "./estimate";
import type { LanguageModel, ModelChunk, ModelMessage, ModelRequest, ToolResultPart } from "./types";

// The keyless scripted model: the default model of the product. Deterministic, no network,
// paced so a person can watch it stream. It answers any prompt sensibly, calls the tools it is
// offered when a prompt asks for them, and writes compaction summaries.

export interface ScriptedReply {
  text: string;
  toolCalls?: { toolName: string; input: unknown }[];
}

/** Decides one model step from the request. Teams plug in a richer playbook. */
export type Playbook = (request: ModelRequest) => ScriptedReply;

export interface ScriptedModelOptions {
  /** Pause between streamed chunks; 0 streams as fast as possible. */
  delayMs: number;
  playbook?: Playbook;
}

/** The keyless model's output limit, as a real model's: what a budget reserves for one of its steps. */
export const KEYLESS_MAX_OUTPUT_TOKENS = 1_024;

export class ScriptedModel implements LanguageModel {
  readonly id = "scripted:keyless";
  /** Its replies are short; budgets reserve this much output for each of its steps. */
  readonly maxOutputTokens = KEYLESS_MAX_OUTPUT_TOKENS;
  private readonly playbook: Playbook;

  constructor(private readonly opts: ScriptedModelOptions) {
    this.playbook = opts.playbook ?? defaultPlaybook;
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelChunk> {
    // The keyless playbooks read what was asked, not who asked it.
    const reply = cappedReply(this.playbook({ ...request, messages: request.messages.map(withoutAuthor) }), request.maxOutputTokens ?? this.maxOutputTokens);
    const pace = new Pace(this.opts.delayMs, signal);
    try {
      for (const piece of chunkText(reply.text)) {
        await pace.pause();
        yield { type: "text-delta", text: piece };
      }
      let n = 0;
      for (const call of reply.toolCalls ?? []) {
        await pace.pause();
        n += 1;
        yield { type: "tool-call", call: { toolCallId: `scripted_${Date.now().toString(36)}_${n}`, ...call } };
      }
    } finally {
      pace.close();
    }
    if (signal.aborted) throw abortError();
    yield { type: "finish", usage: estimateUsage(request, reply) };
  }
}

/**
 * A reply as a provider streams it under an output limit: whole when it fits; otherwise its text
 * up to the limit, cut at a word, and no tool calls (a real model stopped at its limit leaves
 * its calls half-written; the runtime would drop them). Its usage is what it produced.
 */
export function cappedReply(reply: ScriptedReply, maxOutputTokens: number): ScriptedReply {
  if (estimateOutputTokens(reply) <= maxOutputTokens) return reply;
  const room = maxOutputTokens * 4 - JSON.stringify([]).length;
  const cut = reply.text.slice(0, Math.max(0, room));
  const atWord = cut.length < reply.text.length ? cut.replace(/\s+\S*$/, "") : cut;
  return { text: atWord };
}

/**
 * A user message as the playbooks read it: the prompt without its author line. Kept per
 * message: a driver sends the same message objects at every step of a session.
 */
function withoutAuthor(m: ModelMessage): ModelMessage {
  if (m.role !== "user") return m;
  let out = bodies.get(m);
  if (!out) bodies.set(m, (out = { ...m, text: parseHumanPrompt(m.text).body }));
  return out;
}
const bodies = new WeakMap<ModelMessage, ModelMessage>();

/**
 * Pauses end on a grid of PACE_GRID_MS marks (the mark nearest the pause's due time, so a
 * pause is `ms` on average), and every pause due at one mark, of any stream, wakes on one
 * timer: a server streaming to hundreds of agents at 40 chunks a second each had a timer,
 * a promise race and an abort listener per chunk.
 */
const PACE_GRID_MS = 5;
const wakeAt = new Map<number, (() => void)[]>();

function atMark(ms: number, wake: () => void): void {
  const now = Date.now();
  const mark = Math.max(now + 1, Math.round((now + ms) / PACE_GRID_MS) * PACE_GRID_MS);
  const due = wakeAt.get(mark);
  if (due) return void due.push(wake);
  const wakes = [wake];
  wakeAt.set(mark, wakes);
  setTimeout(() => {
    wakeAt.delete(mark);
    for (const w of wakes) w();
  }, mark - now);
}

/** One stream's pacing: its abort listener is added once, not per chunk. */
class Pace {
  private rejectPause: ((e: Error) => void) | null = null;
  private readonly onAbort = () => this.rejectPause?.(abortError());

  constructor(
    private readonly ms: number,
    private readonly signal: AbortSignal,
  ) {
    signal.addEventListener("abort", this.onAbort, { once: true });
  }

  pause(): Promise<void> {
    if (this.signal.aborted) return Promise.reject(abortError());
    if (this.ms <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.rejectPause = reject;
      atMark(this.ms, () => {
        this.rejectPause = null;
        resolve();
      });
    });
  }

  close(): void {
    this.signal.removeEventListener("abort", this.onAbort);
  }
}

/** Word-sized chunks (whitespace kept with the word), like a real token stream. */
export function chunkText(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? (text ? [text] : []);
}

/** The conversation tail a playbook reacts to: new human-ish inputs and the last tool round. */
export function readTail(messages: ModelMessage[]): { inputs: string[]; toolResults: ToolResultPart[] } {
  const inputs: string[] = [];
  let i = messages.length - 1;
  for (; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== "user") break;
    if (!isRuntimeContext(m.text)) inputs.unshift(m.text);
  }
  const before = messages[i];
  return { inputs, toolResults: before?.role === "tool" ? before.results : [] };
}

const TOOL_DIRECTIVE = /^\/tool\s+([\w-]+)\s*(.*)$/;
export const DIRECTIVE_REPLY = "Running the requested tool.";

/**
 * "/tool <name> <json>" lines call a tool verbatim: handy for demos and for seeing how the
 * runtime treats bad arguments. Invalid JSON is passed through as a string.
 */
export function toolDirectives(inputs: string[]): { toolName: string; input: unknown }[] {
  const calls: { toolName: string; input: unknown }[] = [];
  for (const line of inputs.join("\n").split("\n")) {
    const m = TOOL_DIRECTIVE.exec(line.trim());
    if (m) calls.push({ toolName: m[1]!, input: parseLoose(m[2] ?? "") });
  }
  return calls;
}

/** The playbook of a plain session: answers prompts, calls offered tools when asked. */
export const defaultPlaybook: Playbook = (request) => {
  if (request.purpose === "summary") return { text: summarise(request.messages) };
  const { inputs, toolResults } = readTail(request.messages);
  const offered = new Set(request.tools.map((t) => t.name));
  const parts: string[] = [];

  if (toolResults.length > 0) parts.push(describeToolResults(toolResults));

  const toolCalls = toolDirectives(inputs);
  if (toolCalls.length > 0) return { text: DIRECTIVE_REPLY, toolCalls };

  const asksTime = inputs.some((t) => /\b(time|date|today|clock)\b/i.test(t));
  if (asksTime && offered.has("current_time") && toolResults.length === 0) {
    const zone = inputs.join(" ").match(/\b([A-Z][a-z]+\/[A-Z][A-Za-z_]+)\b/)?.[1];
    return { text: "Let me check the clock.", toolCalls: [{ toolName: "current_time", input: zone ? { timeZone: zone } : {} }] };
  }

  if (inputs.length === 1) parts.push(answer(inputs[0]!));
  else if (inputs.length > 1) {
    parts.push(`I received ${inputs.length} messages and will take them together:`);
    for (const t of inputs) parts.push(`- ${quote(t)}`);
    parts.push(answer(inputs[inputs.length - 1]!));
  }
  if (parts.length === 0) parts.push("Nothing new to act on, so I'm done for now.");
  return { text: parts.join("\n\n") };
};

function parseLoose(s: string): unknown {
  if (s.trim() === "") return {};
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

function quote(text: string, max = 120): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return `“${oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine}”`;
}

function answer(prompt: string): string {
  const words = prompt.trim().split(/\s+/).filter(Boolean).length;
  const isQuestion = /\?\s*$/.test(prompt.trim());
  const lead = isQuestion ? `You asked ${quote(prompt)}.` : `You said ${quote(prompt)}.`;
  return [
    lead,
    "I'm the **keyless scripted model**: I run without an API key, so my answers follow a fixed script rather than real reasoning. Here is how I would approach it:",
    "1. Restate the goal and the constraints.",
    "2. Break it into small, checkable steps.",
    "3. Do the steps, checking each result before moving on.",
    `(${words} word${words === 1 ? "" : "s"} received. Configure a real model provider to get a real answer.)`,
  ].join("\n\n");
}

function describeToolResults(results: ToolResultPart[]): string {
  return results
    .map((r) => {
      if (r.isError) {
        const err = (r.output as { error?: { code?: string; message?: string } } | null)?.error;
        return `The ${r.toolName} tool reported an error (${err?.code ?? "unknown"}): ${err?.message ?? JSON.stringify(r.output)}`;
      }
      const out = r.output as { local?: string; timeZone?: string } | null;
      if (r.toolName === "current_time" && out?.local) return `It is ${out.local} (${out.timeZone}).`;
      return `The ${r.toolName} tool returned: \`${JSON.stringify(r.output)}\``;
    })
    .join("\n\n");
}

/** A deterministic compaction summary: the conversation's lines, each cut short. */
function summarise(messages: ModelMessage[]): string {
  const text = messages.map((m) => (m.role === "user" ? m.text : "")).join("\n");
  const lines = text
    .split("\n")
    .slice(1)
    .filter((l) => l.startsWith("[") && !l.includes(RUNTIME_CONTEXT_HEADER))
    .map((l) => (l.length > 100 ? `${l.slice(0, 99)}…` : l));
  return formatScriptedSummary(lines);
}

// The keyless model's summaries are read back by the team playbook (a compacted history):
// written and read only here.

/** How the keyless model's compaction summaries start. */
export const SUMMARY_PREFIX = "Summary of the conversation so far:";

/** The prefix line, then one "- " line per (single-line) entry. */
export function formatScriptedSummary(lines: readonly string[]): string {
  return `${SUMMARY_PREFIX}\n${lines.map((l) => `- ${l}`).join("\n")}`;
}

/** The entries of a summary written by formatScriptedSummary; null for any other text. */
export function parseScriptedSummary(text: string): string[] | null {
  if (!text.startsWith(`${SUMMARY_PREFIX}\n`)) return null;
  const body = text.slice(SUMMARY_PREFIX.length + 1);
  if (body === "") return [];
  const lines = body.split("\n");
  return lines.every((l) => l.startsWith("- ")) ? lines.map((l) => l.slice(2)) : null;
}
