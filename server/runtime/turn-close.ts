import type { Db } from "../db/client";
import { Prisma } from "../db/generated/client";
import type { SqlRunner } from "../db/sql";
import { newMessageId, type SessionId, type TurnId } from "../ids";
import type { ToolCall } from "../models/types";
import { BUDGET_RESUME_NOTICE, RESUME_NOTICE } from "./config";
import type { EventPayload, SessionEvent } from "./events";
import { unfinishedStreamText } from "./history";
import { enqueue } from "./inbox";
import { appended, appendStatement, leaseLockStatement, spends, type Lease, type SessionRowChange, type SpendDelta, type Statement } from "./session-log";
import { storedAbortRequest } from "./sessions";
import { turnEndEvent } from "./team-events";
import { recoveredOutcome, toolCallKey, type ToolDefinition, type ToolOutcome } from "./tools";

// How a turn ends: its turn_end and the cleared active turn commit together, after the real
// results of tool calls whose effects committed without one (tools' `recover`), and a turn cut
// short by a crash or shutdown steers a resume notice in so its work goes on.

/** What closing a turn needs from the driver that holds the session's lease. */
export interface TurnCloseScope {
  db: Db;
  sessionId: SessionId;
  /** The driver's exact in-memory copy of the log. */
  events: readonly SessionEvent[];
  lease: Lease;
  /** The tools the model may call now (the policy's `off` ones left out). */
  tools: ReadonlyMap<string, ToolDefinition>;
  /**
   * The tool whose records tell what a call without a result did: any tool of the agent's list,
   * `off` or not, or one no longer listed (teams: an MCP tool whose server went).
   */
  recoveryTool(name: string): ToolDefinition | undefined;
  /**
   * Appends under the lease (keeping `events` exact); `extra` runs in the same transaction,
   * `change` in the append's own statement.
   */
  append(payloads: EventPayload[], extra?: (tx: SqlRunner) => Promise<void>, change?: SessionRowChange): Promise<unknown>;
  /** Events appended here without `append`: the driver's copy of the log takes them (and announces them). */
  committed(events: SessionEvent[], moved?: { spend?: boolean }): void;
  log(line: string): void;
}

/**
 * How a turn ended, other than completed (tryCompleteTurn's alone: it must see no steer input).
 * aborted: a Stop or interrupt; nothing resumes. interrupted: a crash or shutdown cut it short;
 * the resume notice is steered in. error: the turn failed; `error` says why. budget: the team's
 * budget was reached at a step boundary; a notice is steered in, which runs once it is raised.
 */
export type TurnEnding = { reason: "aborted" } | { reason: "interrupted" } | { reason: "budget" } | { reason: "error"; error: string };

export function toolResultEvent(turnId: TurnId, call: ToolCall, outcome: ToolOutcome): EventPayload {
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

/**
 * What ending a turn changes on the session row, in the turn_end's own append (only `when` it
 * holds). A step's reservation against a spending limit (runtime/step-reserve.ts) ends with the
 * turn; the conditional end comes with the last reply, whose spend releases it already.
 */
function clearActiveTurn(when?: Prisma.Sql): Prisma.Sql {
  if (!when) return Prisma.sql`active_turn_id = NULL, abort_request = NULL, reserved_tokens = 0, reserved_cost_nanos = 0`;
  return Prisma.sql`active_turn_id = CASE WHEN ${when} THEN NULL ELSE active_turn_id END,
    abort_request = CASE WHEN ${when} THEN NULL ELSE abort_request END`;
}

/** The text of a pending reply (its assistant message). */
function replyText(reply: PendingReply): string {
  return reply.payloads.flatMap((p) => (p.kind === "assistant_message" ? [p.text] : [])).join("\n");
}

/** A step's finished reply that has not been appended yet: it commits with the turn's end. */
export interface PendingReply {
  payloads: EventPayload[];
  spend: SpendDelta;
}

/**
 * Commits the last step's reply and ends the turn as completed unless steer input is pending
 * (then false: the reply is in the log and the turn goes on), in one round trip and one commit:
 * the session row locked under the lease, then one append (a statement of its own, so its
 * snapshot sees every steer committed before the lock was granted) of the reply, and of the
 * turn_end with the active turn cleared only while no steer item waits. The row lock orders
 * this against "steer now" (inbox.ts): a steer either lands before the check and extends the
 * turn, or sees no active turn and is refused. `then` is read in the same round trip, after
 * the end (the driver's next look at its session).
 */
export async function tryCompleteTurn<T>(
  scope: TurnCloseScope,
  turnId: TurnId,
  reply: PendingReply,
  then: Statement<T>,
): Promise<{ completed: boolean; then: T }> {
  const { sessionId, lease } = scope;
  const lock = leaseLockStatement(sessionId, lease);
  const noSteer = Prisma.sql`NOT EXISTS (SELECT 1 FROM inbox_items WHERE session_id = ${sessionId} AND mode = 'steer')`;
  const payloads: EventPayload[] = [...reply.payloads, { kind: "turn_end", turnId, reason: "completed" }];
  const append = appendStatement(
    sessionId,
    payloads,
    lease,
    reply.spend,
    { set: clearActiveTurn(noSteer) },
    undefined,
    { from: reply.payloads.length, when: noSteer },
  );
  // The team is told when its Lead answered: the turn ended here (the active turn was cleared
  // while the lease is still ours; a batch whose lease was lost appended nothing).
  const told = turnEndEvent(
    sessionId,
    turnId,
    { reason: "completed", text: replyText(reply) },
    Prisma.sql`active_turn_id IS NULL AND lease_owner = ${lease.owner} AND lease_token = ${lease.token}`,
  );
  const [locked, appendedRows, , after] = await scope.db.sql.batch([lock.sql, append.sql, told, then.sql]);
  lock.read(locked!.rows);
  const events = append.read(appendedRows!.rows);
  const completed = events.length === payloads.length;
  scope.committed(completed ? events : appended(events, reply.payloads.length, sessionId, lease), { spend: spends(reply.spend) });
  return { completed, then: then.read(after!.rows) };
}

/**
 * Ends the turn, first reporting the real result of any tool call whose effect committed but
 * whose result never reached the log (a failed append).
 */
export async function endTurn(scope: TurnCloseScope, turnId: TurnId, ending: TurnEnding): Promise<void> {
  await closeTurn(scope, turnId, ending, await recoverToolResults(scope, turnId));
}

/**
 * A crash left this turn open: report the real result of every tool call whose effect
 * committed without its result, keep what was streamed, close the turn as interrupted — or as
 * aborted when a stop or interrupt asked for before the crash still holds (an interrupt's
 * parked inbox stays parked).
 */
export async function closeCrashedTurn(scope: TurnCloseScope, turnId: TurnId): Promise<void> {
  const partial = unfinishedStreamText(scope.events);
  const payloads = await recoverToolResults(scope, turnId);
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
  const requested = await storedAbortRequest(scope.db.sql, scope.sessionId);
  await closeTurn(scope, turnId, requested ? { reason: "aborted" } : { reason: "interrupted" }, payloads);
  scope.log(`agent ${scope.sessionId}: closed turn ${turnId} left open by a crash`);
}

/** Appends `before` and the turn_end, and clears the active turn, in one transaction. */
async function closeTurn(scope: TurnCloseScope, turnId: TurnId, ending: TurnEnding, before: EventPayload[]): Promise<void> {
  const error = ending.reason === "error" && ending.error ? { error: ending.error } : {};
  const turnEnd: EventPayload = { kind: "turn_end", turnId, reason: ending.reason, ...error };
  const notice = ending.reason === "budget" ? BUDGET_RESUME_NOTICE : ending.reason === "interrupted" ? RESUME_NOTICE : null;
  const failed = ending.reason === "error" ? turnEndEvent(scope.sessionId, turnId, { reason: "error", error: ending.error }) : null;
  await scope.append(
    [...before, turnEnd],
    notice === null && failed === null
      ? undefined
      : async (tx) => {
          if (notice !== null) await enqueue(tx, scope.sessionId, { mode: "steer", text: notice, source: { kind: "system" } });
          if (failed !== null) await tx.$queryRaw(failed);
        },
    { set: clearActiveTurn() },
  );
}

/**
 * The turn's tool calls that have no result in the log, each with its assistant message id.
 * Results follow their assistant message, so a call id is matched within its own reply (model
 * call ids are only unique per reply).
 */
export function unansweredToolCalls(events: readonly SessionEvent[], turnId: TurnId): { messageId: string; call: ToolCall }[] {
  const calls: { messageId: string; call: ToolCall; answered: boolean }[] = [];
  let reply: typeof calls = [];
  // Only this turn's events: from its start, found from the end of the log.
  const isStart = ({ payload: p }: SessionEvent) => p.kind === "turn_start" && p.turnId === turnId;
  let from = events.length - 1;
  while (from > 0 && !isStart(events[from]!)) from -= 1;
  for (const { payload: p } of events.slice(Math.max(0, from))) {
    if (p.kind === "assistant_message" && p.turnId === turnId) {
      reply = p.toolCalls.map((call) => ({ messageId: p.messageId, call, answered: false }));
      calls.push(...reply);
    }
    if (p.kind === "tool_result" && p.turnId === turnId) {
      const c = reply.find((r) => r.call.toolCallId === p.toolCallId && !r.answered);
      if (c) c.answered = true;
    }
  }
  return calls.filter((c) => !c.answered).map(({ messageId, call }) => ({ messageId, call }));
}

/** What a call without a result in the log really did, from its tool's records (null: nothing). */
export function recordedOutcome(scope: TurnCloseScope, turnId: TurnId, toolName: string, callKey: string): Promise<ToolOutcome | null> {
  return recoveredOutcome(scope.recoveryTool(toolName), { db: scope.db, sessionId: scope.sessionId, turnId, callKey, signal: new AbortController().signal });
}

/** Results for the turn's unanswered tool calls, from their tools' own records. */
async function recoverToolResults(scope: TurnCloseScope, turnId: TurnId): Promise<EventPayload[]> {
  const out: EventPayload[] = [];
  for (const { messageId, call } of unansweredToolCalls(scope.events, turnId)) {
    const callKey = toolCallKey(messageId, call.toolCallId);
    const outcome = await recordedOutcome(scope, turnId, call.toolName, callKey);
    if (outcome === null) continue;
    out.push(toolResultEvent(turnId, call, outcome));
    scope.log(`agent ${scope.sessionId}: recovered the result of ${call.toolName} (${callKey})`);
  }
  return out;
}
