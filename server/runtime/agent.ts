import { z } from "zod";
import { inTx, type Db, type DbOrTx, type Tx } from "../db/client";
import { isAppError } from "../errors";
import { newMessageId, newTurnId, type SessionId, type TurnId } from "../ids";
import { notifyActivity } from "../live/activity";
import { ModelChoiceSchema } from "../models/choice";
import type { ModelResolver } from "../models/registry";
import type { LanguageModel, ToolCall, ToolSpec, Usage } from "../models/types";
import { RESUME_NOTICE, type RuntimeConfig } from "./config";
import type { ContextRegistry } from "./context-registry";
import { snapshotToAppend } from "./context-registry";
import type { EventPayload, SessionEvent, TurnEndReason } from "./events";
import {
  estimateTokens,
  lastCompactedSeq,
  lastCompletedTurnSeq,
  retainedContextSnapshot,
  toModelMessages,
  transcriptText,
  unfinishedStreamText,
  visibleEvents,
} from "./history";
import { claimInbox, enqueue, type ClaimedItem } from "./inbox";
import { releaseLease } from "./lease";
import { appendEvents, assertLeaseHeld, readEventsAfter, type Lease } from "./session-log";
import { runTool, toolCallKey, toolSpec, type ToolDefinition, type ToolOutcome, type ToolsetOptions } from "./tools";

// One resident agent: the turn and step loop of a session whose lease this process holds.
// Everything it knows comes from the session log (cold resume is just "start a driver"), and
// every write is fenced by the lease, so a driver that lost its lease can change nothing.

export interface AgentServices {
  db: Db;
  config: RuntimeConfig;
  resolveModel: ModelResolver;
  toolsFor(sessionId: SessionId): { tools: ToolDefinition[]; options?: ToolsetOptions };
  contextFor(sessionId: SessionId): ContextRegistry;
  /** Runs inside the claim transaction (teams record when mail was consumed). */
  onClaimed?: (tx: Tx, sessionId: SessionId, items: ClaimedItem[]) => Promise<void>;
  /** Test seam: a tool's first durable commit happened, its result is not reported yet. */
  afterToolEffect?: (sessionId: SessionId, toolName: string, callKey: string) => Promise<void>;
  log(line: string): void;
}

export type AbortKind = "stop" | "interrupt" | "shutdown" | "lease_lost";

const SessionSettings = z.object({
  model: ModelChoiceSchema,
  optionalContext: z.boolean(),
  parked: z.boolean(),
  activeTurnId: z.string().nullable(),
});

const SUMMARY_SYSTEM =
  "You write compaction summaries. Summarise the conversation so that the agent can continue the work: goals, decisions, facts learned, open tasks. Be concise.";
const SUMMARY_INSTRUCTION = "Summarise this conversation for your own future reference:";

/**
 * A turn cut short by a crash or a server shutdown should not leave its work abandoned: a
 * system notice (Steer) wakes the agent to continue once a process drives it again.
 */
function enqueueResumeNotice(tx: Tx, sessionId: SessionId) {
  return enqueue(tx, sessionId, { mode: "steer", text: RESUME_NOTICE, source: { kind: "system" } });
}

/** Thrown inside a turn-end transaction to roll it back: steer input arrived meanwhile. */
class SteerPending extends Error {}

const AbortRequestRow = z.object({ abortRequest: z.enum(["stop", "interrupt"]).nullable() });

function toolResultEvent(turnId: TurnId, call: ToolCall, outcome: ToolOutcome): EventPayload {
  return {
    kind: "tool_result",
    turnId,
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    output: outcome.output,
    isError: outcome.isError,
    ...(outcome.errorCode ? { errorCode: outcome.errorCode } : {}),
  };
}

export class AgentDriver {
  private events: SessionEvent[] = [];
  private woken = false;
  private wakeWaiter: (() => void) | null = null;
  private turnAbort: AbortController | null = null;
  private abortKind: AbortKind | null = null;
  private closing: AbortKind | null = null;
  private tools = new Map<string, ToolDefinition>();
  private toolSpecs: ToolSpec[] = [];
  private toolOptions: ToolsetOptions | undefined;
  private context: ContextRegistry;
  done: Promise<void> = Promise.resolve();

  constructor(
    private readonly svc: AgentServices,
    readonly sessionId: SessionId,
    private readonly lease: Lease,
  ) {
    this.context = svc.contextFor(sessionId);
  }

  start(onExit: () => void): void {
    this.done = this.run().finally(onExit);
  }

  /** New input may be waiting. */
  wake(): void {
    this.woken = true;
    this.wakeWaiter?.();
  }

  /** A stop or interrupt was requested in the database; abort the turn if it is ours. */
  async checkAbortRequest(): Promise<void> {
    const row = await this.svc.db.session.findUnique({
      where: { id: this.sessionId },
      select: { abortRequest: true, activeTurnId: true },
    });
    const kind = row?.abortRequest;
    if ((kind === "stop" || kind === "interrupt") && row?.activeTurnId) this.abortTurn(kind);
  }

  private abortTurn(kind: AbortKind): void {
    if (!this.turnAbort || this.turnAbort.signal.aborted) return;
    this.abortKind = kind;
    this.turnAbort.abort();
  }

  /** Graceful shutdown: the open turn ends as interrupted, the inbox stays for the next process. */
  async shutdown(kind: "shutdown" | "lease_lost" = "shutdown"): Promise<void> {
    this.closing = kind;
    this.abortTurn(kind);
    this.wake();
    await this.done;
  }

  private async run(): Promise<void> {
    try {
      const { tools, options } = this.svc.toolsFor(this.sessionId);
      this.tools = new Map(tools.map((t) => [t.name, t]));
      this.toolSpecs = tools.map(toolSpec);
      this.toolOptions = options;
      this.events = await readEventsAfter(this.svc.db, this.sessionId, 0);
      const settings = await this.settings();
      if (settings.activeTurnId) await this.closeCrashedTurn(settings.activeTurnId as TurnId);

      while (!this.closing) {
        this.woken = false;
        const s = await this.settings();
        const pending = s.parked ? 0 : await this.svc.db.inboxItem.count({ where: { sessionId: this.sessionId } });
        if (pending > 0) {
          await this.runTurn();
          continue;
        }
        await this.setStatus("idle");
        const woke = await this.waitForWake(this.svc.config.idleEvictMs);
        if (this.closing || woke) continue;
        // Idle long enough: evict. The runtime re-checks the inbox after we exit, so input
        // that races with the release still finds a driver.
        await releaseLease(this.svc.db, this.sessionId, this.lease);
        await notifyActivity(this.svc.db, this.sessionId, "state");
        return;
      }
      if (this.closing === "shutdown") {
        await releaseLease(this.svc.db, this.sessionId, this.lease);
        await notifyActivity(this.svc.db, this.sessionId, "state");
      } else if (this.closing === "lease_lost") this.svc.log(`agent ${this.sessionId}: lease lost, stopping`);
    } catch (e) {
      if (isAppError(e, "LEASE_LOST") || this.closing === "lease_lost") {
        this.svc.log(`agent ${this.sessionId}: lease lost, stopping`);
        return;
      }
      this.svc.log(`agent ${this.sessionId} crashed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      // Let the recovery sweep adopt it: the next driver closes the open turn as interrupted.
      await releaseLease(this.svc.db, this.sessionId, this.lease).catch(() => undefined);
    }
  }

  private waitForWake(ms: number): Promise<boolean> {
    if (this.woken) return Promise.resolve(true);
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wakeWaiter = null;
        resolve(false);
      }, ms);
      this.wakeWaiter = () => {
        clearTimeout(t);
        this.wakeWaiter = null;
        resolve(true);
      };
    });
  }

  private async settings() {
    const row = await this.svc.db.session.findUniqueOrThrow({
      where: { id: this.sessionId },
      select: { model: true, optionalContext: true, parked: true, activeTurnId: true },
    });
    return SessionSettings.parse(row);
  }

  private async setStatus(status: "running" | "idle"): Promise<void> {
    const n = await this.svc.db.$executeRaw`UPDATE sessions SET status = ${status}
      WHERE id = ${this.sessionId} AND lease_owner = ${this.lease.owner} AND lease_token = ${this.lease.token}
        AND status <> ${status}`;
    if (n > 0) await notifyActivity(this.svc.db, this.sessionId, "state");
  }

  /** Appends under the lease and keeps the in-memory copy of the log exact. */
  private async append(payloads: EventPayload[], extra?: (tx: Tx) => Promise<void>): Promise<SessionEvent[]> {
    const added = await inTx(this.svc.db, async (tx) => {
      const evs = await appendEvents(tx, this.sessionId, payloads, this.lease);
      if (extra) await extra(tx);
      return evs;
    });
    this.events.push(...added);
    return added;
  }

  private claimedMessages(items: ClaimedItem[]): EventPayload[] {
    return items.map((i) => ({ kind: "user_message", messageId: i.id, text: i.text, source: i.source }));
  }

  /**
   * A crash left this turn open: report the real result of every tool call whose effect
   * committed without its result, keep what was streamed, close the turn as interrupted.
   */
  private async closeCrashedTurn(turnId: TurnId): Promise<void> {
    const partial = unfinishedStreamText(this.events);
    const payloads: EventPayload[] = await this.recoverToolResults(turnId);
    if (partial && partial.turnId === turnId) {
      payloads.push({
        kind: "assistant_message",
        messageId: newMessageId(),
        turnId,
        step: partial.step,
        model: "unknown",
        text: partial.text,
        toolCalls: [],
        usage: { inputTokens: 0, outputTokens: 0 },
        interrupted: true,
      });
    }
    // A stop or interrupt asked for before the crash still holds: the turn ends aborted and
    // does not resume (an interrupt's parked inbox stays parked).
    const requested = await this.storedAbortRequest();
    payloads.push({ kind: "turn_end", turnId, reason: requested ? "aborted" : "interrupted" });
    await this.append(payloads, async (tx) => {
      await tx.session.update({ where: { id: this.sessionId }, data: { activeTurnId: null, abortRequest: null } });
      if (!requested) await enqueueResumeNotice(tx, this.sessionId);
    });
    this.svc.log(`agent ${this.sessionId}: closed turn ${turnId} left open by a crash`);
  }

  private async storedAbortRequest(db: DbOrTx = this.svc.db): Promise<"stop" | "interrupt" | null> {
    const row = await db.session.findUniqueOrThrow({ where: { id: this.sessionId }, select: { abortRequest: true } });
    return AbortRequestRow.parse(row).abortRequest;
  }

  /**
   * Results for the turn's tool calls that have none in the log, from their tools' own records.
   * Results follow their assistant message, so a call id is matched within its own reply (model
   * call ids are only unique per reply).
   */
  private async recoverToolResults(turnId: TurnId): Promise<EventPayload[]> {
    const calls: { messageId: string; call: ToolCall; answered: boolean }[] = [];
    let reply: typeof calls = [];
    // Only this turn's events: from its start, found from the end of the log.
    const isStart = ({ payload: p }: SessionEvent) => p.kind === "turn_start" && p.turnId === turnId;
    let from = this.events.length - 1;
    while (from > 0 && !isStart(this.events[from]!)) from -= 1;
    for (const { payload: p } of this.events.slice(Math.max(0, from))) {
      if (p.kind === "assistant_message" && p.turnId === turnId) {
        reply = p.toolCalls.map((call) => ({ messageId: p.messageId, call, answered: false }));
        calls.push(...reply);
      }
      if (p.kind === "tool_result" && p.turnId === turnId) {
        const c = reply.find((r) => r.call.toolCallId === p.toolCallId && !r.answered);
        if (c) c.answered = true;
      }
    }
    const out: EventPayload[] = [];
    for (const { messageId, call, answered } of calls) {
      const tool = this.tools.get(call.toolName);
      if (answered || !tool?.recover) continue;
      const callKey = toolCallKey(messageId, call.toolCallId);
      const output = await tool.recover(callKey, {
        db: this.svc.db,
        sessionId: this.sessionId,
        turnId,
        callKey,
        signal: new AbortController().signal,
      });
      if (output === null) continue;
      out.push(toolResultEvent(turnId, call, { output: tool.output.parse(output), isError: false }));
      this.svc.log(`agent ${this.sessionId}: recovered the result of ${call.toolName} (${callKey})`);
    }
    return out;
  }

  /** One tool call, executed at most once; its result is in the log when this returns. */
  private async runToolCall(turnId: TurnId, assistantMessageId: string, call: ToolCall, signal: AbortSignal): Promise<void> {
    const hook = this.svc.afterToolEffect;
    const run = await runTool(
      this.tools,
      call.toolName,
      call.input,
      {
        db: this.svc.db,
        sessionId: this.sessionId,
        turnId,
        callKey: toolCallKey(assistantMessageId, call.toolCallId),
        signal,
        record: (tx, outcome) => appendEvents(tx, this.sessionId, [toolResultEvent(turnId, call, outcome)], this.lease),
        fence: (tx) => assertLeaseHeld(tx, this.sessionId, this.lease),
        afterEffect: hook ? (name, key) => hook(this.sessionId, name, key) : undefined,
      },
      this.toolOptions,
    );
    if (run.recorded) this.events.push(...run.recorded);
    else await this.append([toolResultEvent(turnId, call, run)]);
  }

  private async runTurn(): Promise<void> {
    // A shutdown that came while the loop was reading the inbox: start nothing. (Checked with
    // no await before turnAbort is set, so a later shutdown always finds the turn to abort.)
    if (this.closing) return;
    const turnId = newTurnId();
    const abort = new AbortController();
    this.turnAbort = abort;
    this.abortKind = null;
    // Turn start, the first claim and step 0 commit together: either the turn owns its input
    // or it never started.
    const started = await inTx(this.svc.db, async (tx) => {
      const items = await claimInbox(tx, this.sessionId, true);
      if (items.length === 0) return false;
      await this.svc.onClaimed?.(tx, this.sessionId, items);
      const evs = await appendEvents(
        tx,
        this.sessionId,
        [{ kind: "turn_start", turnId }, { kind: "step_start", turnId, step: 0 }, ...this.claimedMessages(items)],
        this.lease,
      );
      await tx.session.update({
        where: { id: this.sessionId },
        data: { activeTurnId: turnId, abortRequest: null, status: "running" },
      });
      await notifyActivity(tx, this.sessionId, "state");
      this.events.push(...evs);
      return true;
    });
    if (!started) {
      this.turnAbort = null;
      return;
    }
    let step = 0;
    try {
      const settings = await this.settings();
      const model = this.svc.resolveModel(settings.model);
      for (;;) {
        await this.maybeCompact(model, abort.signal);
        await this.admitRuntimeContext(settings.optionalContext);
        const result = await this.modelStep(model, turnId, step, abort.signal);
        for (const call of result.toolCalls) {
          if (abort.signal.aborted) break;
          await this.runToolCall(turnId, result.messageId, call, abort.signal);
        }
        await this.append([{ kind: "step_end", turnId, step }]);
        if (abort.signal.aborted) throw new Error("aborted");
        if (result.toolCalls.length === 0 && (await this.tryEndTurn(turnId))) return;
        step += 1;
        if (step >= this.svc.config.maxStepsPerTurn) {
          await this.endTurn(turnId, "error", { error: `Stopped after ${step} steps (MAX_STEPS_PER_TURN)` });
          return;
        }
        const requested = await this.stepBoundary(turnId, step);
        if (requested) {
          // A stop or interrupt whose notification this process missed: honoured here.
          this.abortTurn(requested);
          throw new Error("aborted");
        }
      }
    } catch (e) {
      if (isAppError(e, "LEASE_LOST")) throw e;
      if (abort.signal.aborted) {
        const kind = this.abortKind;
        if (kind === "lease_lost") throw e;
        // An interrupt parked the inbox when it was requested (sessions.ts requestAbort); the
        // end of the cut turn does not park again, so input that came after the request runs.
        // A shutdown that overtook a stored stop or interrupt ends the turn as that asked.
        if (kind === "shutdown" && !(await this.storedAbortRequest())) await this.endTurn(turnId, "interrupted", { resume: true });
        else await this.endTurn(turnId, "aborted");
      } else {
        const message = e instanceof Error ? e.message : String(e);
        this.svc.log(`agent ${this.sessionId}: turn ${turnId} failed: ${message}`);
        await this.endTurn(turnId, "error", { error: message });
      }
    } finally {
      this.turnAbort = null;
    }
  }

  /**
   * Later step boundary: claim every pending steer item, then start the step. A stop or
   * interrupt request stored for this turn wins: nothing is claimed and its kind is returned.
   */
  private async stepBoundary(turnId: TurnId, step: number): Promise<"stop" | "interrupt" | null> {
    return inTx(this.svc.db, async (tx) => {
      const requested = await this.storedAbortRequest(tx);
      if (requested) return requested;
      const items = await claimInbox(tx, this.sessionId, false);
      if (items.length > 0) await this.svc.onClaimed?.(tx, this.sessionId, items);
      const evs = await appendEvents(
        tx,
        this.sessionId,
        [{ kind: "step_start", turnId, step }, ...this.claimedMessages(items)],
        this.lease,
      );
      this.events.push(...evs);
      return null;
    });
  }

  /**
   * Ends the turn unless steer input is pending. The session row lock orders this against
   * "steer now" (inbox.ts): a steer either lands before this check and extends the turn, or
   * sees no active turn and is refused.
   */
  private async tryEndTurn(turnId: TurnId): Promise<boolean> {
    try {
      await this.append([{ kind: "turn_end", turnId, reason: "completed" }], async (tx) => {
        const steer = await tx.inboxItem.count({ where: { sessionId: this.sessionId, mode: "steer" } });
        if (steer > 0) throw new SteerPending();
        await tx.session.update({ where: { id: this.sessionId }, data: { activeTurnId: null, abortRequest: null } });
      });
      return true;
    } catch (e) {
      if (e instanceof SteerPending) return false;
      throw e;
    }
  }

  /**
   * Ends the turn, first reporting the real result of any tool call whose effect committed but
   * whose result never reached the log (a failed append). `resume`: steer the restart notice
   * in, so the work goes on once a process drives the agent.
   */
  private async endTurn(turnId: TurnId, reason: TurnEndReason, opts: { error?: string; resume?: boolean } = {}): Promise<void> {
    const { error, resume } = opts;
    const recovered = await this.recoverToolResults(turnId);
    await this.append([...recovered, { kind: "turn_end", turnId, reason, ...(error ? { error } : {}) }], async (tx) => {
      await tx.session.update({ where: { id: this.sessionId }, data: { activeTurnId: null, abortRequest: null } });
      if (resume) await enqueueResumeNotice(tx, this.sessionId);
    });
  }

  private async admitRuntimeContext(optionalEnabled: boolean): Promise<void> {
    const current = await this.context.renderSnapshot({ sessionId: this.sessionId, now: new Date() }, optionalEnabled);
    const text = snapshotToAppend(current, retainedContextSnapshot(visibleEvents(this.events)));
    if (text === null) return;
    await this.append([{ kind: "user_message", messageId: newMessageId(), text, source: { kind: "runtime_context" } }]);
  }

  /** Summarises the completed part of the history when the visible history is over budget. */
  private async maybeCompact(model: LanguageModel, signal: AbortSignal): Promise<void> {
    const visible = visibleEvents(this.events);
    if (estimateTokens(toModelMessages(visible)) <= this.svc.config.compactionBudgetTokens) return;
    // Only completed turns are summarised, and only what no earlier compaction covered.
    const throughSeq = lastCompletedTurnSeq(this.events);
    if (throughSeq <= lastCompactedSeq(this.events)) return;
    const range = visible.filter((e) => e.seq <= throughSeq);
    let summary = "";
    for await (const chunk of model.stream(
      {
        system: SUMMARY_SYSTEM,
        messages: [{ role: "user", text: `${SUMMARY_INSTRUCTION}\n\n${transcriptText(toModelMessages(range))}` }],
        tools: [],
        purpose: "summary",
      },
      signal,
    )) {
      if (chunk.type === "text-delta") summary += chunk.text;
    }
    const summaryMessageId = newMessageId();
    await this.append([
      { kind: "compaction", throughSeq, summaryMessageId },
      { kind: "user_message", messageId: summaryMessageId, text: summary, source: { kind: "compaction_summary" } },
    ]);
    this.svc.log(`agent ${this.sessionId}: compacted history through seq ${throughSeq} (${model.id})`);
  }

  /** One model call: streams deltas into the log in small batches, then records the message. */
  private async modelStep(
    model: LanguageModel,
    turnId: TurnId,
    step: number,
    signal: AbortSignal,
  ): Promise<{ toolCalls: ToolCall[]; messageId: string }> {
    if (signal.aborted) throw new Error("aborted");
    const request = {
      system: this.svc.config.systemPrompt,
      messages: toModelMessages(visibleEvents(this.events)),
      tools: this.toolSpecs,
      purpose: "step" as const,
    };
    let text = "";
    const toolCalls: ToolCall[] = [];
    let usage: Usage = { inputTokens: 0, outputTokens: 0 };
    const flusher = new DeltaFlusher(this.svc.config.deltaFlushMs, (chunk) =>
      this.append([{ kind: "assistant_delta", turnId, step, text: chunk }]).then(() => undefined),
    );
    const messageId = newMessageId();
    const message = (interrupted: boolean): EventPayload => ({
      kind: "assistant_message",
      messageId,
      turnId,
      step,
      model: model.id,
      text,
      // Half-formed (and unexecuted) tool calls of an interrupted reply are dropped.
      toolCalls: interrupted ? [] : toolCalls,
      usage,
      interrupted,
    });
    try {
      for await (const chunk of model.stream(request, signal)) {
        if (chunk.type === "text-delta") {
          text += chunk.text;
          flusher.push(chunk.text);
        } else if (chunk.type === "tool-call") toolCalls.push(chunk.call);
        else usage = chunk.usage;
      }
      if (signal.aborted) throw new Error("aborted");
    } catch (e) {
      await flusher.settle();
      if (text !== "" || signal.aborted) await this.append([message(true)]);
      throw e;
    }
    await flusher.settle();
    await this.append([message(false)]);
    return { toolCalls, messageId };
  }
}

/**
 * Batches streamed text into at most one log append per interval, one append in flight at a
 * time. The final assistant message carries the whole text, so unflushed pieces can be dropped.
 */
class DeltaFlusher {
  private buffer = "";
  private inFlight: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private failed: unknown = null;

  constructor(
    private readonly intervalMs: number,
    private readonly write: (text: string) => Promise<void>,
  ) {}

  push(text: string): void {
    this.buffer += text;
    if (!this.timer && !this.inFlight) this.timer = setTimeout(() => this.flush(), this.intervalMs);
  }

  private flush(): void {
    this.timer = null;
    if (this.buffer === "" || this.failed) return;
    const text = this.buffer;
    this.buffer = "";
    this.inFlight = this.write(text)
      .catch((e: unknown) => {
        this.failed = e;
      })
      .finally(() => {
        this.inFlight = null;
        if (this.buffer !== "" && !this.timer) this.timer = setTimeout(() => this.flush(), this.intervalMs);
      });
  }

  /** Stops flushing and waits for the write in flight; rethrows a failed write (lease lost). */
  async settle(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.buffer = "";
    while (this.inFlight) await this.inFlight;
    if (this.failed) throw this.failed;
  }
}
