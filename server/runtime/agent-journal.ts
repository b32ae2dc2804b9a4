import type { SqlRunner } from "../db/sql";
import { newMessageId, type SessionId } from "../ids";
import { costNanos, FREE, type Price } from "../models/catalog";
import type { ModelChoice } from "../models/choice";
import type { LanguageModel } from "../models/types";
import type { AgentServices, RuntimeLogFields } from "./agent-services";
import { planCompaction, summarise } from "./compaction";
import { snapshotToAppend, type ContextRegistry } from "./context-registry";
import type { EventPayload, SessionEvent } from "./events";
import { ModelHistory } from "./history";
import { spendOf } from "./model-step";
import { appendEvents, readEventsAfter, spends, type Lease, type SessionRowChange, type SpendDelta } from "./session-log";
import { stepNeed, type StepNeed } from "./step-reserve";

// A resident agent's copy of its session log (agent.ts): every append goes through it under the
// lease, so the copy stays exact and each commit is announced; the model's view of the log
// (history.ts), the runtime context to add and the compaction due are read off it.

export class AgentJournal {
  events: SessionEvent[] = [];
  /** The model's view of `events`, kept up to date as they grow. */
  readonly history = new ModelHistory();
  private readonly context: ContextRegistry;

  constructor(
    private readonly svc: AgentServices,
    private readonly sessionId: SessionId,
    private readonly lease: Lease,
  ) {
    this.context = svc.contextFor(sessionId);
  }

  /** Reads the whole log (a driver's start: cold resume is just this). */
  async load(): Promise<void> {
    this.events = await readEventsAfter(this.svc.db.sql, this.sessionId, 0);
  }

  /** Appends under the lease and keeps the in-memory copy of the log exact. */
  async append(
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
  committed(events: SessionEvent[], moved: { spend?: boolean; state?: boolean } = {}): void {
    if (events.length === 0) return;
    this.events.push(...events);
    // Two appends in flight at once (a flush and a model_wait) may answer out of seq order.
    if (this.events.length > events.length && this.events.at(-events.length - 1)!.seq > events[0]!.seq) this.events.sort((a, b) => a.seq - b.seq);
    const { sessionId } = this;
    this.svc.announce({ sessionId, kind: "event", lastSeq: events.at(-1)!.seq, events });
    if (moved.spend) this.svc.announce({ sessionId, kind: "spend" });
    if (moved.state) this.svc.announce({ sessionId, kind: "state" });
  }

  /** The most the next step can spend, for the spending limit: estimated from the history it will send. */
  stepNeed(choice: ModelChoice, toolSpecsChars: number): StepNeed {
    let modelLimit: number | undefined;
    try {
      modelLimit = this.svc.resolveModel(choice).maxOutputTokens;
    } catch {
      // An unavailable model: the step fails as it calls it, having spent nothing.
    }
    return stepNeed({
      modelLimit,
      price: this.svc.priceOf?.(choice) ?? FREE,
      fixedChars: this.svc.config.systemPrompt.length + toolSpecsChars,
      historyTokens: this.history.estimatedTokens(this.events),
      compactionBudgetTokens: this.svc.config.compactionBudgetTokens,
    });
  }

  /**
   * The runtime-context snapshot to append, if it changed or is no longer visible; its
   * providers read through `db`.
   */
  async contextPayloads(db: SqlRunner, opts: { includeOptional: boolean }): Promise<EventPayload[]> {
    const current = await this.context.renderSnapshot({ sessionId: this.sessionId, now: new Date(), db }, opts);
    const text = snapshotToAppend(current, this.history.retainedContextSnapshot(this.events));
    if (text === null) return [];
    return [{ kind: "user_message", messageId: newMessageId(), text, source: { kind: "runtime_context" } }];
  }

  async admitRuntimeContext(opts: { includeOptional: boolean }): Promise<void> {
    await this.append(await this.contextPayloads(this.svc.db.sql, opts));
  }

  /** Summarises the completed part of the history when the visible history is over budget. */
  async maybeCompact(model: LanguageModel, price: Price, signal: AbortSignal, where: RuntimeLogFields): Promise<boolean> {
    const plan = planCompaction(this.events, this.svc.config.compactionBudgetTokens, this.history);
    if (!plan) return false;
    const [marker, summary] = await summarise(model, plan, signal);
    const usage = marker.usage ?? { inputTokens: 0, outputTokens: 0 };
    const cost = costNanos(price, usage);
    await this.append([{ ...marker, costNanos: cost }, summary], undefined, spendOf(usage, cost));
    this.svc.log(`agent ${this.sessionId}: compacted history through seq ${plan.throughSeq} (${model.id})`, where);
    return true;
  }
}
