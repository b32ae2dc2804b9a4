import { Prisma } from "../db/generated/client";
import { BatchedSql } from "../db/sql";
import type { SessionId } from "../ids";
import type { AgentJournal } from "./agent-journal";
import type { AgentServices } from "./agent-services";
import type { EventPayload, SessionEvent } from "./events";
import { claimCtes } from "./inbox";
import { appendStatement, leaseLockStatement, type Lease, type SessionRowChange, type SpendDelta } from "./session-log";
import { requestCharge, type StepNeed, type StepRoom } from "./step-reserve";

// A turn's or step's start (agent.ts), in one round trip and one commit.

const NO_LIMIT: StepRoom = { maxOutputTokens: null };

/** What a step's start needs of its driver. */
export interface StepStartScope {
  svc: AgentServices;
  sessionId: SessionId;
  lease: Lease;
  /** Aborted when the driver closes (a wait for room under the spending limit stops). */
  lifetime: AbortSignal;
  journal: AgentJournal;
  /** The step's output limit under a spending limit (null: the model's own). */
  setOutputLimit(limit: number | null): void;
}

/** A step that started: the stop or interrupt request that ended it at once, its events, and what its request costs. */
export interface StepStarted {
  abortRequest: "stop" | "interrupt" | null;
  events: SessionEvent[];
  /** What the step's request will be billed once its provider answers (model-step.ts; null: the step did not start). */
  charge: SpendDelta | null;
}

/**
 * After the budget and the runtime context were read, side by side, when they read anything:
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
 * not fit the spending limit (`need`: its most), only `stepEnd` is appended, and "budget"
 * returned.
 */
export async function startStep(
  scope: StepStartScope,
  stepEnd: EventPayload[],
  start: EventPayload[],
  { firstStep, need, retried = false }: { firstStep: boolean; need: () => StepNeed; retried?: boolean },
  context: { includeOptional: boolean },
  change?: SessionRowChange,
): Promise<"budget" | StepStarted> {
  const { svc, sessionId, lease } = scope;
  const step = need();
  // Read together: one round trip and one commit on a connection of their own (BatchedSql),
  // not in db.sqlCoalesced's shared writes, where they would wait behind other agents'
  // statements (longer steps at 200 agents).
  const reads = new BatchedSql(svc.db.sql);
  const [room, contextPayloads] = await Promise.all([
    svc.reserveStep?.(svc.db, sessionId, lease, reads, () => step, scope.lifetime) ?? NO_LIMIT,
    scope.journal.contextPayloads(reads, context),
  ]);
  if (room === "budget") {
    await scope.journal.append(stepEnd);
    return "budget";
  }
  scope.setOutputLimit(room.maxOutputTokens);
  // A turn's start clears a request left from before it (change.set); later steps honour one.
  const noRequest = firstStep ? undefined : Prisma.sql`abort_request IS NULL`;
  const where = room.holds ? (noRequest ? Prisma.sql`${noRequest} AND ${room.holds}` : room.holds) : noRequest;
  const lock = leaseLockStatement(sessionId, lease);
  const append = appendStatement(sessionId, [...stepEnd, ...start, ...contextPayloads], lease, undefined, { ...change, where }, {
    ctes: claimCtes(sessionId, { firstStep, unlessAbortRequested: !firstStep }, lease),
    at: stepEnd.length + start.length,
    required: firstStep,
  });
  const stopped = noRequest && stepEnd.length > 0 ? appendStatement(sessionId, stepEnd, lease, undefined, { where: Prisma.sql`NOT (${noRequest})` }) : null;
  const hook = svc.onClaimed?.(sessionId);
  const [locked, appendedRows, ...rest] = await svc.db.sql.batch([lock.sql, append.sql, ...(stopped ? [stopped.sql] : []), ...(hook ? [hook] : [])]);
  const stored = lock.read(locked!.rows).abortRequest;
  const abortRequest = firstStep ? null : stored;
  const events = abortRequest ? (stopped?.read(rest[0]!.rows) ?? []) : append.read(appendedRows!.rows);
  const started = !abortRequest && events.length > 0;
  // A limit set since the reserver found none: nothing committed; start again, under it. (A
  // first step that claimed nothing looks the same: it tries once more, then has no input.)
  if (room.holds && !started && !abortRequest && (!firstStep || !retried)) return startStep(scope, stepEnd, start, { firstStep, need, retried: true }, context, change);
  // A turn's start moves the status (change.set).
  scope.journal.committed(events, { state: change !== undefined && !abortRequest });
  const contextChars = contextPayloads.reduce((n, p) => n + (p.kind === "user_message" ? p.text.length : 0), 0);
  return { abortRequest, events, charge: started ? requestCharge(step, contextChars) : null };
}
