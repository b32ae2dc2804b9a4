import { z } from "zod";
import { abortableWait } from "../abortable";
import type { Db } from "../db/client";
import { Prisma } from "../db/generated/client";
import { BatchedSql, type SqlRunner } from "../db/sql";
import { AppError, isAppError } from "../errors";
import { asTurnId, newMessageId, newTurnId, type SessionId, type TurnId } from "../ids";
import type { Activity } from "../db/notify";
import { costNanos, FREE, type Price } from "../models/catalog";
import { estimateUsage } from "../models/estimate";
import { ModelChoiceSchema, type ModelChoice } from "../models/choice";
import { redactSecrets } from "../models/redact";
import type { ModelResolver } from "../models/registry";
import type { LanguageModel, ToolCall, ToolSpec, Usage } from "../models/types";
import { planCompaction, summarise } from "./compaction";
import type { RuntimeConfig } from "./config";
import type { ContextRegistry } from "./context-registry";
import { snapshotToAppend } from "./context-registry";
import { DeltaFlusher } from "./delta-flusher";
import type { EventPayload, PayloadOf, SessionEvent } from "./events";
import { ModelHistory } from "./history";
import { claimCtes } from "./inbox";
import { releaseLease } from "./lease";
import {
  appendEvents,
  appendStatement,
  assertLeaseHeld,
  leaseLockStatement,
  readEventsAfter,
  spends,
  type Lease,
  type SessionRowChange,
  type SpendDelta,
  type Statement,
} from "./session-log";
import { storedAbortRequest } from "./sessions";
import { releaseReservation, stepNeed, StepWaitAborted, type StepNeed, type StepReserver } from "./step-reserve";
import { runTool, toolCallKey, toolSpec, type ToolDefinition, type ToolsetOptions } from "./tools";
import type { ToolMode } from "./approvals";
import { callTool, notRunResults, parkedCalls, type CallScope } from "./waiting-calls";
import { closeCrashedTurn, endTurn, toolResultEvent, tryCompleteTurn, type PendingReply, type TurnCloseScope, type TurnEnding } from "./turn-close";

// One resident agent: the turn and step loop of a session whose lease this process holds.
// Everything it knows comes from the session log (cold resume is just "start a driver"), and
// every write is fenced by the lease, so a driver that lost its lease can change nothing.

export interface AgentServices {
  db: Db;
  config: RuntimeConfig;
  resolveModel: ModelResolver;
  /** The price table's entry for a model (models/catalog.ts); unset, steps cost nothing. */
  priceOf?: (choice: ModelChoice) => Price;
  toolsFor(sessionId: SessionId): { tools: ToolDefinition[]; options?: ToolsetOptions };
  contextFor(sessionId: SessionId): ContextRegistry;
  /**
   * A statement run in the claim's transaction after the claimed input entered the history
   * (teams record when mail was consumed).
   */
  onClaimed?: (sessionId: SessionId) => Prisma.Sql;
  /**
   * Just before a turn or a step starts: reserve its most against the spending limit (teams:
   * the team budget; runtime/step-reserve.ts). When it does not fit no turn starts, and a
   * running turn ends with reason `budget`.
   */
  reserveStep?: StepReserver;
  /**
   * After each commit that changes what the session shows (ActivityHub.announce): this
   * process's live feeds take an append's events without a read, other processes hear of it.
   */
  announce(activity: Activity<SessionEvent>): void;
  /**
   * The team's tool policy (runtime/approvals.ts): `off` tools leave the agent's list, `ask`
   * tools wait for a person's approval. Read as each turn starts; unset, every tool is allowed.
   */
  toolModes?: (db: SqlRunner, sessionId: SessionId) => Promise<ReadonlyMap<string, ToolMode>>;
  /**
   * Tools read as each turn starts, after `toolsFor`'s (teams: their MCP servers' tools, which
   * change while agents live); each brings its default mode for where the policy is silent.
   */
  turnTools?: (db: SqlRunner, sessionId: SessionId) => Promise<ToolDefinition[]>;
  /** The tasks the agent has in progress, named in what it asks people. */
  tasksInProgress?: (db: SqlRunner, sessionId: SessionId) => Promise<string[]>;
  /** A tool no longer in the list, for what its records tell of a call that has no result (teams: MCP calls). */
  recoveryTool?: (toolName: string) => ToolDefinition | undefined;
  /** Test seam: a tool's first durable commit happened, its result is not reported yet. */
  afterToolEffect?: (sessionId: SessionId, toolName: string, callKey: string) => Promise<void>;
  /** One log line, with where it comes from (server/log.ts fields) and how bad it is. */
  log(line: string, fields?: RuntimeLogFields): void;
}

export interface RuntimeLogFields {
  sessionId?: string;
  teamId?: string;
  turnId?: string;
  level?: "info" | "warn" | "error";
}

type AbortKind = "stop" | "interrupt" | "shutdown" | "lease_lost";

const SessionSettings = z.object({
  model: ModelChoiceSchema,
  optional_context: z.boolean(),
  parked: z.boolean(),
  active_turn_id: z.string().nullable(),
  team_id: z.string().nullable(),
  /** Whether the inbox holds anything (what the loop needs of it). */
  pending: z.boolean(),
});

type Settings = z.infer<typeof SessionSettings>;
const SettingsRows = z.array(SessionSettings);
const AbortKindRows = z.array(z.object({ kind: z.string().nullable() }));

export class AgentDriver {
  private events: SessionEvent[] = [];
  /** The model's view of `events`, kept up to date as they grow. */
  private readonly history = new ModelHistory();
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
  private tools = new Map<string, ToolDefinition>();
  private allTools: ToolDefinition[] = [];
  private modes: ReadonlyMap<string, ToolMode> = new Map();
  /** Every tool of the turn's list, `off` ones too (what recovery asks). */
  private listed = new Map<string, ToolDefinition>();
  private toolSpecs: ToolSpec[] = [];
  private toolSpecsChars = 2;
  /** The current step's output limit under a spending limit (null: the model's own). */
  private stepOutputLimit: number | null = null;
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
    this.wakeUp();
  }

  /** A stop or interrupt was requested in the database; abort the turn if it is ours. */
  async checkAbortRequest(): Promise<void> {
    const rows = await this.svc.db.sql.$queryRaw`SELECT abort_request AS kind FROM sessions
      WHERE id = ${this.sessionId} AND active_turn_id IS NOT NULL`;
    const kind = AbortKindRows.parse(rows)[0]?.kind;
    if (kind === "stop" || kind === "interrupt") this.abortTurn(kind);
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
      this.allTools = tools;
      this.toolOptions = options;
      await this.readToolModes();
      this.events = await readEventsAfter(this.svc.db.sql, this.sessionId, 0);
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

  /**
   * The turn's tools and the team's policy: `off` tools leave the list the model sees (every
   * member's alike); a tool the policy does not name has its default mode.
   */
  private async readToolModes(): Promise<void> {
    const [policy, more] = await Promise.all([
      this.svc.toolModes?.(this.svc.db.sql, this.sessionId),
      this.svc.turnTools?.(this.svc.db.sql, this.sessionId),
    ]);
    const all = more?.length ? [...this.allTools, ...more] : this.allTools;
    const modes = new Map<string, ToolMode>();
    for (const t of all) modes.set(t.name, policy?.get(t.name) ?? t.defaultMode ?? "allow");
    this.modes = modes;
    this.listed = new Map(all.map((t) => [t.name, t]));
    const on = all.filter((t) => modes.get(t.name) !== "off");
    this.tools = new Map(on.map((t) => [t.name, t]));
    this.toolSpecs = on.map(toolSpec);
    this.toolSpecsChars = JSON.stringify(this.toolSpecs).length;
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
      await this.append(await notRunResults(scope, turnId, parked.messageId, parked.calls));
      return void (await closeCrashedTurn(this.closeScope(), turnId));
    }
    await this.setStatus("running");
    return this.driveTurn(turnId, parked.step, settings, { messageId: parked.messageId, calls: parked.calls });
  }

  private callScope(turnId: TurnId, messageId: string, signal: AbortSignal): CallScope {
    return {
      ...this.closeScope(),
      modes: this.modes,
      toolOptions: this.toolOptions,
      tasksInProgress: async () => (await this.svc.tasksInProgress?.(this.svc.db.sql, this.sessionId)) ?? [],
      run: (call) => this.runToolCall(turnId, messageId, call, signal),
    };
  }

  /** From here on, a wake() settles wokenSince (renewed before each look at the session). */
  private renewWake(): void {
    this.wokenSince = new Promise((resolve) => (this.wakeUp = resolve));
  }

  private settingsStatement(): Statement<Settings> {
    return {
      sql: Prisma.sql`SELECT s.model, s.optional_context, s.parked, s.active_turn_id, s.team_id,
          EXISTS (SELECT 1 FROM inbox_items i WHERE i.session_id = s.id) AS pending
        FROM sessions s WHERE s.id = ${this.sessionId}`,
      read: (rows) => {
        const row = SettingsRows.parse(rows)[0];
        if (!row) throw new AppError("SESSION_NOT_FOUND", `Session ${this.sessionId} not found`);
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

  /** Appends under the lease and keeps the in-memory copy of the log exact. */
  private async append(
    payloads: EventPayload[],
    extra?: (tx: SqlRunner) => Promise<void>,
    spend?: SpendDelta,
    change?: SessionRowChange,
  ): Promise<SessionEvent[]> {
    if (payloads.length === 0 && !extra) return [];
    // Alone, an append is one statement: no transaction (its round trips) needed.
    const added = extra
      ? await this.svc.db.sqlTx(async (tx) => {
          const evs = await appendEvents(tx, this.sessionId, payloads, this.lease, spend, change);
          await extra(tx);
          return evs;
        })
      : await appendEvents(this.svc.db.sql, this.sessionId, payloads, this.lease, spend, change);
    this.committed(added, { spend: spends(spend) });
    return added;
  }

  /**
   * Keeps the in-memory copy of the log exact and announces the append (and what else moved
   * with it: the spend, the status).
   */
  private committed(events: SessionEvent[], moved: { spend?: boolean; state?: boolean } = {}): void {
    if (events.length === 0) return;
    this.events.push(...events);
    // Two appends in flight at once (a flush and a model_wait) may answer out of seq order.
    if (this.events.length > events.length && this.events.at(-events.length - 1)!.seq > events[0]!.seq) this.events.sort((a, b) => a.seq - b.seq);
    const { sessionId } = this;
    this.svc.announce({ sessionId, kind: "event", lastSeq: events.at(-1)!.seq, events });
    if (moved.spend) this.svc.announce({ sessionId, kind: "spend" });
    if (moved.state) this.svc.announce({ sessionId, kind: "state" });
  }

  /** What the turn-closing functions (turn-close.ts) need from this driver. */
  private closeScope(): TurnCloseScope {
    return {
      db: this.svc.db,
      sessionId: this.sessionId,
      events: this.events,
      lease: this.lease,
      tools: this.tools,
      recoveryTool: (name) => this.listed.get(name) ?? this.svc.recoveryTool?.(name),
      append: (payloads, extra, change) => this.append(payloads, extra, undefined, change),
      committed: (events, moved) => this.committed(events, moved),
      log: (line) => this.svc.log(line),
    };
  }

  private endTurn(turnId: TurnId, ending: TurnEnding): Promise<void> {
    return endTurn(this.closeScope(), turnId, ending);
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
    if (run.recorded) this.committed(run.recorded);
    else await this.append([toolResultEvent(turnId, call, run)]);
  }

  /** One turn, from its start to its end; "over budget" when the budget let none start, "parked" when it waits for people. */
  private async runTurn(settings: Settings): Promise<"over budget" | "parked" | undefined> {
    // A shutdown that came while the loop was reading the inbox: start nothing. (One that comes
    // while the turn starts cuts it as soon as driveTurn runs.)
    if (this.closing) return;
    const turnId = newTurnId();
    await this.readToolModes();
    const context = { includeOptional: settings.optional_context };
    // Turn start, the first claim, step 0 and its runtime context commit together: either the
    // turn owns its input or it never started.
    const started = await this.startStep(
      [],
      [{ kind: "turn_start", turnId }, { kind: "step_start", turnId, step: 0 }],
      { firstStep: true, need: () => this.stepNeed(settings.model) },
      context,
      { set: Prisma.sql`active_turn_id = ${turnId}, abort_request = NULL, status = 'running'` },
    ).catch((e: unknown) => {
      // Closing while the first step waited for room under the spending limit: nothing started.
      if (e instanceof StepWaitAborted) return "closing" as const;
      throw e;
    });
    if (started === "closing") return;
    if (started === "budget") return "over budget";
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
          if (await this.maybeCompact(model, price, abort.signal)) await this.admitRuntimeContext(context);
          result = await this.modelStep(model, price, turnId, step, abort.signal);
        }
        const reply = result.reply;
        if (reply) {
          // A reply without tool calls ends its step; it commits with the turn's end, or alone
          // when a steer waits (the turn goes on) or the turn was cut meanwhile.
          const keepReply = () => this.append(reply.payloads, undefined, reply.spend);
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
          await this.append(stepEnd);
          throw new Error("aborted");
        }
        step += 1;
        if (step >= this.svc.config.maxStepsPerTurn) {
          await this.append(stepEnd);
          await this.endTurn(turnId, { reason: "error", error: `Stopped after ${step} steps (MAX_STEPS_PER_TURN)` });
          return;
        }
        const requested = await this.stepBoundary(turnId, step, stepEnd, context, () => this.stepNeed(settings.model));
        if (requested === "budget") {
          await this.endTurn(turnId, { reason: "budget" });
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
        await this.endTurn(turnId, { reason: cutByShutdown ? "interrupted" : "aborted" });
      } else {
        // Provider errors arrive readable and redacted (models/resilience.ts, ai-sdk.ts); key
        // shapes are masked again here because this text reaches the transcript, roster and log.
        const message = redactSecrets(e instanceof Error ? e.message : String(e));
        this.svc.log(`agent ${this.sessionId}: turn ${turnId} failed: ${message}`, { ...this.where(), turnId, level: "warn" });
        await this.endTurn(turnId, { reason: "error", error: message });
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
    const started = await this.startStep(stepEnd, [{ kind: "step_start", turnId, step }], { firstStep: false, need }, context);
    return started === "budget" ? "budget" : started.abortRequest;
  }

  /**
   * A turn's or step's start, in one round trip and one commit (after the budget and the
   * runtime context were read, side by side, when they read anything):
   *  1. the session row locked while the lease is ours (LEASE_LOST otherwise), with the stop or
   *     interrupt request stored for the turn;
   *  2. the last step's end (`stepEnd`), `start`, the claimed input (inbox.ts `claimCtes`: made
   *     into user messages by the append's own statement, so nothing waits for this process
   *     between the lock and the commit) and the runtime context, in one append. A turn's first
   *     step appends nothing unless it claimed input (a turn starts only with input); a later
   *     step appends this only while no request is stored...
   *  3. ...and `stepEnd` alone when one is (the opposite condition: exactly one of 2 and 3
   *     appends, and the request is returned);
   *  4. the `onClaimed` hook's statement.
   * They run in the implicit transaction of one Sync: all commit or none. When the step does
   * not fit the spending limit (`need`: its most, asked for only under one), only `stepEnd` is
   * appended, and "budget" returned.
   */
  private async startStep(
    stepEnd: EventPayload[],
    start: EventPayload[],
    { firstStep, need }: { firstStep: boolean; need: () => StepNeed },
    context: { includeOptional: boolean },
    change?: SessionRowChange,
  ): Promise<"budget" | { abortRequest: "stop" | "interrupt" | null; events: SessionEvent[] }> {
    // Read together: one round trip and one commit on a connection of their own (BatchedSql),
    // not in db.sqlCoalesced's shared writes, where they would wait behind other agents'
    // statements (longer steps at 200 agents).
    const reads = new BatchedSql(this.svc.db.sql);
    const [room, contextPayloads] = await Promise.all([
      this.svc.reserveStep?.(this.svc.db, this.sessionId, this.lease, reads, need, this.lifetime.signal) ?? { maxOutputTokens: null },
      this.contextPayloads(reads, context),
    ]);
    if (room === "budget") {
      await this.append(stepEnd);
      return "budget";
    }
    this.stepOutputLimit = room.maxOutputTokens;
    const { sessionId, lease } = this;
    // A turn's start clears a request left from before it (change.set); later steps honour one.
    const noRequest = firstStep ? undefined : Prisma.sql`abort_request IS NULL`;
    const lock = leaseLockStatement(sessionId, lease);
    const append = appendStatement(sessionId, [...stepEnd, ...start, ...contextPayloads], lease, undefined, { ...change, where: noRequest }, {
      ctes: claimCtes(sessionId, { firstStep, unlessAbortRequested: !firstStep }, lease),
      at: stepEnd.length + start.length,
      required: firstStep,
    });
    const stopped = noRequest && stepEnd.length > 0 ? appendStatement(sessionId, stepEnd, lease, undefined, { where: Prisma.sql`NOT (${noRequest})` }) : null;
    const hook = this.svc.onClaimed?.(sessionId);
    const [locked, appendedRows, ...rest] = await this.svc.db.sql.batch([
      lock.sql,
      append.sql,
      ...(stopped ? [stopped.sql] : []),
      ...(hook ? [hook] : []),
    ]);
    const stored = lock.read(locked!.rows).abortRequest;
    const abortRequest = firstStep ? null : stored;
    const events = abortRequest ? (stopped?.read(rest[0]!.rows) ?? []) : append.read(appendedRows!.rows);
    // A turn's start moves the status (change.set).
    this.committed(events, { state: change !== undefined && !abortRequest });
    return { abortRequest, events };
  }

  /** The most the next step can spend, for the spending limit: estimated from the history it will send. */
  private stepNeed(choice: ModelChoice): StepNeed {
    let modelLimit: number | undefined;
    try {
      modelLimit = this.svc.resolveModel(choice).maxOutputTokens;
    } catch {
      // An unavailable model: the step fails as it calls it, having spent nothing.
    }
    return stepNeed({
      modelLimit,
      price: this.svc.priceOf?.(choice) ?? FREE,
      fixedChars: this.svc.config.systemPrompt.length + this.toolSpecsChars,
      historyTokens: this.history.estimatedTokens(this.events),
      compactionBudgetTokens: this.svc.config.compactionBudgetTokens,
    });
  }

  /**
   * The runtime-context snapshot to append, if it changed or is no longer visible; its
   * providers read through `db`.
   */
  private async contextPayloads(db: SqlRunner, opts: { includeOptional: boolean }): Promise<EventPayload[]> {
    const current = await this.context.renderSnapshot({ sessionId: this.sessionId, now: new Date(), db }, opts);
    const text = snapshotToAppend(current, this.history.retainedContextSnapshot(this.events));
    if (text === null) return [];
    return [{ kind: "user_message", messageId: newMessageId(), text, source: { kind: "runtime_context" } }];
  }

  private async admitRuntimeContext(opts: { includeOptional: boolean }): Promise<void> {
    await this.append(await this.contextPayloads(this.svc.db.sql, opts));
  }

  /** Summarises the completed part of the history when the visible history is over budget. */
  private async maybeCompact(model: LanguageModel, price: Price, signal: AbortSignal): Promise<boolean> {
    const plan = planCompaction(this.events, this.svc.config.compactionBudgetTokens, this.history);
    if (!plan) return false;
    const [marker, summary] = await summarise(model, plan, signal);
    const usage = marker.usage ?? { inputTokens: 0, outputTokens: 0 };
    const cost = costNanos(price, usage);
    await this.append([{ ...marker, costNanos: cost }, summary], undefined, spendOf(usage, cost));
    this.svc.log(`agent ${this.sessionId}: compacted history through seq ${plan.throughSeq} (${model.id})`, this.where());
    return true;
  }

  /**
   * One model call: streams deltas into the log in small batches, then records the message
   * with its usage and cost, and adds both to the session's spend in the same transaction. A
   * complete reply without tool calls is returned unrecorded (`reply`): it commits with the
   * turn's end (runTurn).
   */
  private async modelStep(
    model: LanguageModel,
    price: Price,
    turnId: TurnId,
    step: number,
    signal: AbortSignal,
  ): Promise<{ toolCalls: ToolCall[]; messageId: string; reply: PendingReply | null }> {
    if (signal.aborted) throw new Error("aborted");
    const request = {
      system: this.svc.config.systemPrompt,
      messages: this.history.messages(this.events),
      tools: this.toolSpecs,
      purpose: "step" as const,
      ...(this.stepOutputLimit !== null ? { maxOutputTokens: this.stepOutputLimit } : {}),
    };
    let text = "";
    const toolCalls: ToolCall[] = [];
    let usage: Usage & { estimated?: true } = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 };
    // Every streaming agent flushes a few times a second: those due together go out together
    // (db.sqlCoalesced), each still its own commit.
    const flusher = new DeltaFlusher(this.svc.config.deltaFlushMs, async (chunk) =>
      this.committed(await appendEvents(this.svc.db.sqlCoalesced, this.sessionId, [{ kind: "assistant_delta", turnId, step, text: chunk }], this.lease)),
    );
    const messageId = newMessageId();
    const message = ({ interrupted }: { interrupted: boolean }): PayloadOf<"assistant_message"> => ({
      kind: "assistant_message",
      messageId,
      turnId,
      step,
      model: model.id,
      text,
      // Half-formed (and unexecuted) tool calls of an interrupted reply are dropped.
      toolCalls: interrupted ? [] : toolCalls,
      usage,
      costNanos: costNanos(price, usage),
      interrupted,
    });
    let reported = false;
    /** The reply's events (a complete one without tool calls ends its step) and its spend. */
    const reply = (interrupted: boolean, endsStep = false): PendingReply => {
      // A reply cut off before its usage came is billed all the same: estimated, and marked so.
      if (!reported && (text !== "" || toolCalls.length > 0)) usage = { ...estimateUsage(request, { text, toolCalls }), estimated: true };
      const m = message({ interrupted });
      const end: EventPayload[] = endsStep ? [{ kind: "step_end", turnId, step }] : [];
      // Its real usage replaces the step's reservation (runtime/step-reserve.ts).
      return { payloads: [m, ...end], spend: { ...spendOf(usage, m.costNanos ?? 0), settlesReservation: true } };
    };
    const record = (r: PendingReply) => this.append(r.payloads, undefined, r.spend);
    try {
      for await (const chunk of model.stream(request, signal)) {
        if (chunk.type === "text-delta") {
          text += chunk.text;
          flusher.push(chunk.text);
        } else if (chunk.type === "tool-call") toolCalls.push(chunk.call);
        else if (chunk.type === "wait") await this.append([{ kind: "model_wait", turnId, step, wait: chunk.wait }]);
        else if (chunk.type === "finish") {
          usage = chunk.usage;
          reported = true;
        }
      }
      if (signal.aborted) throw new Error("aborted");
    } catch (e) {
      await flusher.settle();
      if (text !== "" || signal.aborted) await record(reply(true));
      throw e;
    }
    await flusher.settle();
    // Without tool calls the reply is left to the caller, to commit with the turn's end.
    if (toolCalls.length === 0) return { toolCalls, messageId, reply: reply(false, true) };
    await record(reply(false));
    return { toolCalls, messageId, reply: null };
  }
}

/** What a step (or a compaction summary) adds to the session's spend counters. */
function spendOf(usage: Usage, costNanos: number): SpendDelta {
  return { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, cachedInputTokens: usage.cachedInputTokens ?? 0, costNanos };
}
