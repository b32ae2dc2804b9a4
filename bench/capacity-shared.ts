import type { IntervalHistogram } from "node:perf_hooks";
import { z } from "zod";
import { isRuntimeContext, parseRuntimeContext } from "../server/models/runtime-context";
import { chunkText, formatScriptedSummary, type Playbook, type ScriptedModel } from "../server/models/scripted";
import type { LanguageModel, ModelChunk, ModelMessage, ModelRequest } from "../server/models/types";
import { parseIdentity, TEAM_IDENTITY } from "../server/team/identity";

// What bench/capacity.ts and its app server process (capacity-server.ts) share: the agents'
// playbook, the timed model and the IPC messages between the two.
//
// The agents: once told to go, every member of a team (a Lead and three workers) streams a
// reply of about 300 tokens a step in one endless turn. Every step ends in one tool call,
// because a step without one would end the turn (runtime/agent.ts); every fourth call is a
// send_message to the next member of the ring lead → worker-1 → worker-2 → worker-3 → lead,
// the others read the board or the roster, and the Lead's first step creates a task.
// TimedModel records each model call's own wall time, so the benchmark can take it off a step.

export const WORKERS = ["worker-1", "worker-2", "worker-3"] as const;
const RING = ["lead", ...WORKERS];
/** Every SEND_EVERY-th step of a member sends a team message. */
export const SEND_EVERY = 4;

const SENTENCES = [
  "I read the parser module again and the nested list case still drops the last item when the input ends without a newline.",
  "The fix is small: flush the pending item before closing the list, and keep the indentation stack in one place.",
  "I will add a test that feeds the exact input from the report and checks every item survives the round trip.",
  "The renderer does not need to change, because it only sees the tree the parser builds.",
  "Next I compare the timings before and after, since the parser runs on every keystroke in the editor.",
  "Then I update the task on the board and tell the next teammate what changed, so nobody repeats the work.",
];

/**
 * 1,100–1,400 characters by agent (about 300 tokens at four characters a token), word-sized
 * chunks. The lengths differ so agents that started together drift apart.
 */
function replyText(name: string, step: number, agent: number): string {
  const length = 1050 + (agent % 7) * 50;
  let text = `Step ${step} of ${name}.`;
  for (let i = 0; text.length < length; i++) text += ` ${SENTENCES[(step + i) % SENTENCES.length]}`;
  return text;
}

/** The replies' shape, for the benchmark's report (the step number barely changes it). */
export const REPLY = (() => {
  const texts = Array.from({ length: 7 }, (_, agent) => replyText("worker-1", 10, agent));
  const chunks = texts.map((t) => chunkText(t).length);
  const chars = texts.map((t) => t.length);
  const mean = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
  return { chars: `${Math.min(...chars)}–${Math.max(...chars)}`, chunks: `${Math.min(...chunks)}–${Math.max(...chunks)}`, meanTokensEstimated: Math.ceil(mean(chars) / 4) };
})();

// Teammates get a stand-by task when they are added (one short step, no tool: the turn ends),
// so setting up many teams is not slowed down by the agents already running; then every agent
// gets the go prompt, and its next turn is endless. TimedModel finds the index in either.
export const standbyPrompt = (index: number) => `Capacity bench agent #${index}. Stand by.`;
export const goPrompt = (index: number) => `Capacity bench agent #${index}: go. Keep working on the parser until told otherwise.`;
const AGENT_INDEX = /Capacity bench agent #(\d+)\b/;
const GO = /Capacity bench agent #\d+: go\./;

function agentOf(messages: ModelMessage[]): number | null {
  for (const m of messages) {
    const found = m.role === "user" ? AGENT_INDEX.exec(m.text) : null;
    if (found) return Number(found[1]);
  }
  return null;
}

/** The member's name from its identity context (team/identity.ts writes and parses it). */
function nameOf(messages: ModelMessage[]): string {
  let name = "lead";
  for (const m of messages) {
    if (m.role !== "user" || !isRuntimeContext(m.text)) continue;
    const section = parseRuntimeContext(m.text)?.find((s) => s.name === TEAM_IDENTITY);
    const who = parseIdentity(section?.text ?? m.text);
    if (who) name = who.name;
  }
  return name;
}

function toolCallFor(name: string, step: number, agent: number): { toolName: string; input: unknown } {
  // Offset by agent, so some agent of any group that started together sends at every step.
  if ((step + agent) % SEND_EVERY === SEND_EVERY - 1) {
    const target = RING[(RING.indexOf(name) + 1) % RING.length]!;
    return { toolName: "send_message", input: { target, message: `Update ${step} from ${name}: the nested list fix is in, tests next.` } };
  }
  if (name === "lead" && step === 0) {
    return { toolName: "team_task_create", input: { subject: "Fix nested lists", description: "The parser drops the last item of a nested list." } };
  }
  return step % 2 === 0 ? { toolName: "team_task_list", input: {} } : { toolName: "list_agents", input: {} };
}

export const capacityPlaybook: Playbook = (request) => {
  if (request.purpose === "summary") return { text: formatScriptedSummary(["Working on the nested list fix."]) };
  if (!request.messages.some((m) => m.role === "user" && GO.test(m.text))) return { text: "Standing by." };
  const name = nameOf(request.messages);
  const agent = agentOf(request.messages) ?? 0;
  const step = request.messages.filter((m) => m.role === "assistant").length;
  return { text: replyText(name, step, agent), toolCalls: [toolCallFor(name, step, agent)] };
};

/**
 * One model call of a step: the agent's index (from its prompt); Date.now() when the runtime
 * called stream() and when the model yielded its finish; the pacing alone (chunks × delayMs:
 * ScriptedModel pauses before each text chunk and each tool call).
 */
export const ParentMessageSchema = z.object({ id: z.number().int(), type: z.enum(["sample", "calls", "stop"]) });
export type ParentMessage = z.infer<typeof ParentMessageSchema>;

/** monitorEventLoopDelay's sampling interval: its figures include it, loopDelayMs takes it off. */
export const LOOP_RESOLUTION_MS = 10;
const LoopDelaySchema = z.object({ p50Ms: z.number(), p99Ms: z.number(), maxMs: z.number() });

/** How late the event loop ran beyond the sampling interval, in ms. */
export function loopDelayMs(h: IntervalHistogram): z.infer<typeof LoopDelaySchema> {
  const ms = (ns: number) => Math.max(0, Math.round((ns / 1e6 - LOOP_RESOLUTION_MS) * 100) / 100);
  return { p50Ms: ms(h.percentile(50)), p99Ms: ms(h.percentile(99)), maxMs: ms(h.max) };
}

export const ModelCallSchema = z.object({
  agent: z.number().int(),
  startedAt: z.number(),
  finishedAt: z.number(),
  nominalMs: z.number(),
});
export type ModelCall = z.infer<typeof ModelCallSchema>;

// IPC between bench/capacity.ts and capacity-server.ts (the protocol is described there).
export const ChildMessageSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ready"), url: z.string() }),
  z.object({ type: z.literal("log"), line: z.string() }),
  z.object({ type: z.literal("failed"), error: z.string() }),
  z.object({
    type: z.literal("sample"),
    id: z.number().int(),
    at: z.number(),
    cpu: z.object({ user: z.number(), system: z.number() }),
    loop: LoopDelaySchema,
  }),
  z.object({ type: z.literal("calls"), id: z.number().int(), calls: z.array(ModelCallSchema) }),
  z.object({ type: z.literal("stopped"), id: z.number().int(), ms: z.number() }),
]);
export type ChildMessage = z.infer<typeof ChildMessageSchema>;

/** The paced keyless model, timing each step's call (summaries and unlabelled calls are not recorded). */
export class TimedModel implements LanguageModel {
  readonly id: string;

  constructor(
    private readonly inner: ScriptedModel,
    private readonly delayMs: number,
    private readonly record: (call: ModelCall) => void,
  ) {
    this.id = inner.id;
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelChunk> {
    const agent = request.purpose === "step" ? agentOf(request.messages) : null;
    const startedAt = Date.now();
    let pauses = 0;
    for await (const chunk of this.inner.stream(request, signal)) {
      if (chunk.type === "text-delta" || chunk.type === "tool-call") pauses += 1;
      if (chunk.type === "finish" && agent !== null) {
        this.record({ agent, startedAt, finishedAt: Date.now(), nominalMs: pauses * this.delayMs });
      }
      yield chunk;
    }
  }
}
