
import { abortableWait } from "../abortable";
import { Prisma } from "../db/generated/client";
import { isAppError } from "../errors";
import { asTurnId, newTurnId, type SessionId, type TurnId } from "../ids";
import { FREE, type Price } from "../models/catalog";
import { redactSecrets } from "../models/redact";
import type { LanguageModel, ToolCall } from "../models/types";
import type { EventPayload } from "./events";
import { releaseLease } from "./lease";
import type { Lease, Statement } from "./session-log";
import { storedAbortRequest } from "./sessions";
import { releaseReservation, StepWaitAborted, type StepNeed } from "./step-reserve";
import type { StepBill } from "./model-step";
import { callTool, notRunResults, parkedCalls, type CallScope } from "./waiting-calls";
import type { AgentServices, RuntimeLogFields } from "./agent-services";
import { settingsStatement, turnAbortRequest, type Settings } from "./agent-settings";
import { modelStep, type ModelStepScope } from "./model-step";
import { startStep, type StepStartScope } from "./step-start";
import { TurnTools } from "./turn-tools";
import { AgentJournal } from "./agent-journal";
import { closeCrashedTurn, endTurn, tryCompleteTurn, type PendingReply, type TurnCloseScope } from "./turn-close";

// One resident agent: the turn and step loop of a session whose lease this process holds.
// Everything it knows comes from the session log (cold resume is just "start a driver"), and
// every write is fenced by the lease, so a driver that lost its lease can change nothing.

type AbortKind = "stop" | "interrupt" | "shutdown" | "lease_lost";

export class AgentDriver {
  /** Settles on wake(); renewed each round of the loop, so it means "woken since". */
  private wokenSince: Promise<void> = Promise.resolve();
  private wakeUp: () => void = () => undefined;
  /** The session as the last turn's end read it (with that end, one round trip less per turn). */
  private prefetched: Settings | null = null;
  /** The agent's team (never changes), as its settings say, for log lines. */
  private teamId: string | null = null;
  private turnAbort: AbortController | null = null;
  private abortKind: AbortKind | null = null;
  private closing: AbortKind | null = null;
  /** Aborted when the driver closes: what it waits for outside a turn's model call stops waiting. */
  private readonly lifetime = new AbortController();
  private toolset = new TurnTools([], undefined);
  /** Its copy of the session log, through which every append goes. */
  private readonly journal: AgentJournal;
  /** The current step's output limit under a spending limit (null: the model's own). */
  private stepOutputLimit: number | null = null;
  /** What the current step's request costs, billed when its provider answers and settled by its reply (model-step.ts). */
  private readonly bill: StepBill = { due: null, charged: null };
  done: Promise<void> = Promise.resolve();

  constructor(
    private readonly svc: AgentServices,
    readonly sessionId: SessionId,
    private readonly lease: Lease,
  ) {
    this.journal = new AgentJournal(svc, sessionId, lease);
  }

  start(onExit: () => void): void {
    this.done = this.run().finally(onExit);
  }

  /** New input may be waiting. */
  wake(): void {
    this.wakeUp();
  }

  /** A stop or interrupt was requested in the database; abort the turn if it is ours. */
  async checkAbortRequest(): Promise<void> {
    const kind = await turnAbortRequest(this.svc.db.sql, this.sessionId);
    if (kind) this.abortTurn(kind);
  }

  private abortTurn(kind: AbortKind): void {
    if (!this.turnAbort || this.turnAbort.signal.aborted) return;
    this.abortKind = kind;
    this.turnAbort.abort();
  }

  /** Graceful shutdown: the open turn ends as interrupted, the inbox stays for the next process. */
  async shutdown(kind: "shutdown" | "lease_lost" = "shutdown"): Promise<void> {
    this.closing = kind;
    this.lifetime.abort();
    this.abortTurn(kind);
    this.wake();
    await this.done;
  }

  private async run(): Promise<void> {
    try {
      const { tools, options } = this.svc.toolsFor(this.sessionId);
      this.toolset = new TurnTools(tools, options);
      await this.toolset.read(this.svc.db.sql, this.sessionId, this.svc);
      await this.journal.load();
      const settings = await this.settings();
      if (settings.active_turn_id && (await this.finishOpenTurn(asTurnId(settings.active_turn_id), settings)) === "parked") return await this.leaveParked();

      while (!this.closing) {
        let s = this.prefetched;
        this.prefetched = null;
        if (!s) {
          this.renewWake();
          s = await this.settings();
        }
        // Over budget (checked as the turn would start), pending input waits for the raise's
        // wake instead of starting a turn.
        if (!s.parked && s.pending) {
          const ran = await this.runTurn(s);
          if (ran === "parked") return await this.leaveParked();
          if (ran !== "over budget") continue;
        }
        await this.setStatus("idle");
        const woke = (await abortableWait({ ms: this.svc.config.idleEvictMs, until: this.wokenSince })) === "woken";
        if (this.closing || woke) continue;
        // Idle long enough: evict. The runtime re-checks the inbox after we exit, so input
        // that races with the release still finds a driver.
        await releaseLease(this.svc.db.sql, this.sessionId, this.lease);
        this.svc.announce({ sessionId: this.sessionId, kind: "state" });
        return;
      }
      if (this.closing === "shutdown") {
        await releaseLease(this.svc.db.sql, this.sessionId, this.lease);
        this.svc.announce({ sessionId: this.sessionId, kind: "state" });
      } else if (this.closing === "lease_lost") this.svc.log(`agent ${this.sessionId}: lease lost, stopping`);
    } catch (e) {
      if (isAppError(e, "LEASE_LOST") || this.closing === "lease_lost") {
        this.svc.log(`agent ${this.sessionId}: lease lost, stopping`, { ...this.where(), level: "warn" });
        return;
      }
      this.svc.log(`agent ${this.sessionId} crashed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`, { ...this.where(), level: "error" });
      // Let the recovery sweep adopt it: the next driver closes the open turn as interrupted.
      await releaseLease(this.svc.db.sql, this.sessionId, this.lease).catch(() => undefined);
    }
  }

  /** The turn waits for people (waiting-calls.ts): nothing holds it, the decision's wake resumes it. */
  private async leaveParked(): Promise<void> {
    await releaseLease(this.svc.db.sql, this.sessionId, this.lease);
    this.svc.announce({ sessionId: this.sessionId, kind: "state" });
  }

  /**
   * A turn found open when the driver starts: one parked for people goes on (or, stopped
   * meanwhile, ends with its calls reported as not run); one a crash left open is closed.
   */
  private async finishOpenTurn(turnId: TurnId, settings: Settings): Promise<"parked" | undefined> {
    const scope = this.callScope(turnId, "", new AbortController().signal);
    const parked = await parkedCalls(scope, turnId);
    if (!parked) return void (await closeCrashedTurn(this.closeScope(), turnId));
    if (await storedAbortRequest(this.svc.db.sql, this.sessionId)) {
      await this.journal.append(await notRunResults(scope, turnId, parked.messageId, parked.calls));
      return void (await closeCrashedTurn(this.closeScope(), turnId));
    }
    await this.setStatus("running");
    return this.driveTurn(turnId, parked.step, settings, { messageId: parked.messageId, calls: parked.calls });
  }

  private callScope(turnId: TurnId, messageId: string, signal: AbortSignal): CallScope {
    return {
      ...this.closeScope(),
      modes: this.toolset.modes,
      toolOptions: this.toolset.options,
      tasksInProgress: async () => (await this.svc.tasksInProgress?.(this.svc.db.sql, this.sessionId)) ?? [],
      run: (call) => this.toolset.run(this.stepScope(), turnId, messageId, call, signal),
    };
  }

  /** From here on, a wake() settles wokenSince (renewed before each look at the session). */
  private renewWake(): void {
    this.wokenSince = new Promise((resolve) => (this.wakeUp = resolve));
  }

  private settingsStatement(): Statement<Settings> {
    const statement = settingsStatement(this.sessionId);
    return {
      sql: statement.sql,
      read: (rows) => {
        const row = statement.read(rows);
        this.teamId = row.team_id;
        return row;
      },
    };
  }

  /** Where a log line comes from. */
  private where(): RuntimeLogFields {
    return { sessionId: this.sessionId, ...(this.teamId ? { teamId: this.teamId } : {}) };
  }

  private async settings(): Promise<Settings> {
    const statement = this.settingsStatement();
    return statement.read(await this.svc.db.sql.$queryRaw(statement.sql));
  }

  private async setStatus(status: "running" | "idle"): Promise<void> {
    // An unchanged status is not announced.
    const changed = await this.svc.db.sql.$executeRaw`UPDATE sessions SET status = ${status}
      WHERE id = ${this.sessionId} AND lease_owner = ${this.lease.owner} AND lease_token = ${this.lease.token}
        AND status <> ${status}`;
    if (changed > 0) this.svc.announce({ sessionId: this.sessionId, kind: "state" });
  }

  /** What the turn-closing functions (turn-close.ts) need from this driver. */
  private closeScope(): TurnCloseScope {
    return {
      db: this.svc.db,
      sessionId: this.sessionId,
      events: this.journal.events,
      lease: this.lease,
      tools: this.toolset.on,
      recoveryTool: (name) => this.toolset.listed.get(name) ?? this.svc.recoveryTool?.(name),
      append: (payloads, extra, change) => this.journal.append(payloads, extra, undefined, change),
      committed: (events, moved) => this.journal.committed(events, moved),
      log: (line) => this.svc.log(line),
    };
  }

  /** One turn, from its start to its end; "over budget" when the budget let none start, "parked" when it waits for people. */
  private async runTurn(settings: Settings): Promise<"over budget" | "parked" | undefined> {
    // A shutdown that came while the loop was reading the inbox: start nothing. (One that comes
    // while the turn starts cuts it as soon as driveTurn runs.)
    if (this.closing) return;
    const turnId = newTurnId();
    await this.toolset.read(this.svc.db.sql, this.sessionId, this.svc);
    const context = { includeOptional: settings.optional_context };
    // Turn start, the first claim, step 0 and its runtime context commit together: either the
    // turn owns its input or it never started.
    const started = await startStep(
      this.stepScope(),
      [],
      [{ kind: "turn_start", turnId }, { kind: "step_start", turnId, step: 0 }],
      { firstStep: true, need: () => this.journal.stepNeed(settings.model, this.toolset.specsChars) },
      context,
      { set: Prisma.sql`active_turn_id = ${turnId}, abort_request = NULL, status = 'running'` },
    ).catch((e: unknown) => {
      // Closing while the first step waited for room under the spending limit: nothing started.
      if (e instanceof StepWaitAborted) return "closing" as const;
      throw e;
    });
    if (started === "closing") return;
    if (started === "budget") return "over budget";
    this.bill.due = started.charge;
    if (started.events.length === 0) {
      // No input to start with after all: the step's reservation goes.
      if (this.stepOutputLimit !== null) await releaseReservation(this.svc.db.sql, this.sessionId, this.lease);
      return;
    }
    return this.driveTurn(turnId, 0, settings, null);
  }

  /**
   * The turn's steps from `step` on, to its end or until it parks. `resume`: the reply's calls
   * still to finish first (a turn parked for people, resumed after the decision).
   */
  private async driveTurn(
    turnId: TurnId,
    firstStep: number,
    settings: Settings,
    resume: { messageId: string; calls: ToolCall[] } | null,
  ): Promise<"parked" | undefined> {
    const abort = new AbortController();
    this.turnAbort = abort;
    this.abortKind = null;
    // A shutdown that came while the turn was starting: it is cut like any other.
    if (this.closing) {
      this.abortKind = this.closing;
      abort.abort();
    }
    const context = { includeOptional: settings.optional_context };
    let step = firstStep;
    try {
      const model = this.svc.resolveModel(settings.model);
      const price = this.svc.priceOf?.(settings.model) ?? FREE;
      for (;;) {
        let result: { messageId: string; toolCalls: ToolCall[]; reply: PendingReply | null };
        if (resume) {
          // The reply with these calls is in the log; its step ends at the next boundary.
          result = { messageId: resume.messageId, toolCalls: resume.calls, reply: null };
          resume = null;
        } else {
          // A compaction may hide the snapshot the step started with: look again after one.
          if (await this.journal.maybeCompact(model, price, abort.signal, this.where())) await this.journal.admitRuntimeContext(context);
          result = await this.modelStep(model, price, turnId, step, abort.signal);
        }
        const reply = result.reply;
        if (reply) {
          // A reply without tool calls ends its step; it commits with the turn's end, or alone
          // when a steer waits (the turn goes on) or the turn was cut meanwhile.
          const keepReply = () => this.journal.append(reply.payloads, undefined, reply.spend);
          if (abort.signal.aborted) {
            await keepReply();
            throw new Error("aborted");
          }
          // The loop's next look at the session rides with the end; a wake from here on counts.
          this.renewWake();
          const end = await tryCompleteTurn(this.closeScope(), turnId, reply, this.settingsStatement()).catch(async (e: unknown) => {
            // The batch failed: the reply is kept on its own (its message id cannot enter the
            // log twice, should the batch have committed after all), then the turn ends with
            // the error.
            if (!isAppError(e, "LEASE_LOST")) await keepReply().catch(() => undefined);
            throw e;
          });
          if (end.completed) {
            this.prefetched = end.then;
            return;
          }
        }
        const calls = this.callScope(turnId, result.messageId, abort.signal);
        for (const call of result.toolCalls) {
          if (abort.signal.aborted) break;
          const done = await callTool(calls, turnId, result.messageId, call);
          if (done === "parked") return "parked";
          if (done === "stopped") {
            // A stop or interrupt stored while the call was about to wait: honoured here.
            const requested = await storedAbortRequest(this.svc.db.sql, this.sessionId);
            if (requested) this.abortTurn(requested);
            break;
          }
        }
        // A reply with tool calls ends its step in the next transaction (the next step's start,
        // or the turn's end).
        const stepEnd: EventPayload[] = reply ? [] : [{ kind: "step_end", turnId, step }];
        if (abort.signal.aborted) {
          await this.journal.append(stepEnd);
          throw new Error("aborted");
        }
        step += 1;
        if (step >= this.svc.config.maxStepsPerTurn) {
          await this.journal.append(stepEnd);
          await endTurn(this.closeScope(), turnId, { reason: "error", error: `Stopped after ${step} steps (MAX_STEPS_PER_TURN)` });
          return;
        }
        const requested = await this.stepBoundary(turnId, step, stepEnd, context, () => this.journal.stepNeed(settings.model, this.toolset.specsChars));
        if (requested === "budget") {
          await endTurn(this.closeScope(), turnId, { reason: "budget" });
          return;
        }
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
        const cutByShutdown = kind === "shutdown" && !(await storedAbortRequest(this.svc.db.sql, this.sessionId));
        await endTurn(this.closeScope(), turnId, { reason: cutByShutdown ? "interrupted" : "aborted" });
      } else {
        // Provider errors arrive readable and redacted (models/resilience.ts, ai-sdk.ts); key
        // shapes are masked again here because this text reaches the transcript, roster and log.
        const message = redactSecrets(e instanceof Error ? e.message : String(e));
        this.svc.log(`agent ${this.sessionId}: turn ${turnId} failed: ${message}`, { ...this.where(), turnId, level: "warn" });
        await endTurn(this.closeScope(), turnId, { reason: "error", error: message });
      }
    } finally {
      this.turnAbort = null;
    }
  }

  /**
   * Later step boundary, one transaction: the last step's end (`stepEnd`, unless it committed
   * with its reply), then, unless a stop or interrupt request stored for this turn or a reached
   * budget stops the turn here (the reason is returned, nothing is claimed), every pending
   * steer item, the step's start and its runtime context.
   */
  private async stepBoundary(
    turnId: TurnId,
    step: number,
    stepEnd: EventPayload[],
    context: { includeOptional: boolean },
    need: () => StepNeed,
  ): Promise<"stop" | "interrupt" | "budget" | null> {
    const started = await startStep(this.stepScope(), stepEnd, [{ kind: "step_start", turnId, step }], { firstStep: false, need }, context);
    if (started === "budget") return "budget";
    this.bill.due = started.charge;
    return started.abortRequest;
  }

  /** What a step's start and its model call (step-start.ts, model-step.ts) need from this driver. */
  private stepScope(): StepStartScope & ModelStepScope {
    const setOutputLimit = (limit: number | null) => (this.stepOutputLimit = limit);
    return { svc: this.svc, sessionId: this.sessionId, lease: this.lease, lifetime: this.lifetime.signal, journal: this.journal, setOutputLimit, bill: this.bill };
  }


  /** One model call (model-step.ts) with the step's history, tools and output limit. */
  private async modelStep(model: LanguageModel, price: Price, turnId: TurnId, step: number, signal: AbortSignal) {
    if (signal.aborted) throw new Error("aborted");
    const request = {
      system: this.svc.config.systemPrompt,
      messages: this.journal.history.messages(this.journal.events),
      tools: this.toolset.specs,
      purpose: "step" as const,
      ...(this.stepOutputLimit !== null ? { maxOutputTokens: this.stepOutputLimit } : {}),
    };
    return modelStep(this.stepScope(), request, model, price, turnId, step, signal);
  }
}
