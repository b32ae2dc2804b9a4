import { toolErrorOutput } from "../errors";
import type { TurnId } from "../ids";
import type { ToolCall } from "../models/types";
import { decisionOf, parkCall, refusalText, type ApprovalKind, type Decision, type ToolMode } from "./approvals";
import type { EventPayload, SessionEvent } from "./events";
import { assertLeaseHeld } from "./session-log";
import { storedAbortRequest } from "./sessions";
import { prepareToolCall, toolCallKey, type ToolOutcome, type ToolsetOptions } from "./tools";
import { recordedOutcome, toolResultEvent, unansweredToolCalls, type TurnCloseScope } from "./turn-close";

// A tool call that waits for people (runtime/approvals.ts): under `ask` it waits for an
// approval, `ask_humans` for an answer. The first time the driver meets such a call it parks
// the turn; the driver that resumes the turn after the decision applies it to the call exactly
// once: approved, the tool runs (its own records first: a crash during the call may have left
// the effect without its result); denied or stopped, the model reads who said no and why;
// answered, the answer with the person's name is the result.

export interface CallScope extends TurnCloseScope {
  modes: ReadonlyMap<string, ToolMode>;
  toolOptions: ToolsetOptions | undefined;
  /** The tasks this agent has in progress, named in its requests. */
  tasksInProgress(): Promise<string[]>;
  /** Runs the call (once; its result is in the log when this returns). */
  run(call: ToolCall): Promise<void>;
}

/** What waits for people before this tool runs, if anything. */
function asksFor(scope: CallScope, toolName: string): ApprovalKind | null {
  if (scope.tools.get(toolName)?.asksPeople) return "question";
  return scope.modes.get(toolName) === "ask" ? "approval" : null;
}

/**
 * One call of a reply: run, answered from a decision, or parked ("parked": the turn waits).
 * "stopped": a stop or interrupt is stored for the turn, so nobody is asked (the caller ends the
 * turn as that asked).
 */
export async function callTool(scope: CallScope, turnId: TurnId, messageId: string, call: ToolCall): Promise<"done" | "parked" | "stopped"> {
  const kind = asksFor(scope, call.toolName);
  if (!kind) {
    await scope.run(call);
    return "done";
  }
  const callKey = toolCallKey(messageId, call.toolCallId);
  const decision = await decisionOf(scope.db.sql, callKey);
  if (decision && decision.status !== "pending") {
    await applyDecision(scope, turnId, call, callKey, decision);
    return "done";
  }
  // Nobody is asked about a call that could not run anyway: its error is the result now.
  const prepared = prepareToolCall(scope.tools, call.toolName, call.input, scope.toolOptions);
  if ("recorded" in prepared) {
    await scope.append([toolResultEvent(turnId, call, prepared)]);
    return "done";
  }
  const taskIds = await scope.tasksInProgress();
  const status = await scope.db.sqlTx(async (tx) => {
    // The row lock orders this against a stop (sessions.ts requestAbort): one stored before
    // parks nothing; one after finds the request and cancels it.
    await assertLeaseHeld(tx, scope.sessionId, scope.lease);
    if (await storedAbortRequest(tx, scope.sessionId)) return "stopped" as const;
    return parkCall(tx, { sessionId: scope.sessionId, turnId, callKey, kind, toolName: call.toolName, arguments: prepared.input, taskIds });
  });
  if (status === "stopped") return "stopped";
  if (status === "pending") return "parked";
  // Decided between the read and the park (another driver's request, same call): apply it.
  const now = await decisionOf(scope.db.sql, callKey);
  if (now) await applyDecision(scope, turnId, call, callKey, now);
  return "done";
}

async function applyDecision(scope: CallScope, turnId: TurnId, call: ToolCall, callKey: string, d: Decision): Promise<void> {
  if (d.status === "approved") {
    // A crash during an approved call may have left its effect without the result: the tool's
    // own record says so, and then it does not run again.
    const recovered = await recordedOutcome(scope, turnId, call.toolName, callKey);
    if (recovered) {
      await scope.append([toolResultEvent(turnId, call, recovered)]);
      return;
    }
    await scope.run(call);
    return;
  }
  await scope.append([toolResultEvent(turnId, call, decidedOutcome(d))]);
}

/** The result a decision other than approval gives the call. */
export function decidedOutcome(d: Decision): ToolOutcome {
  if (d.status === "answered") return { output: { answer: d.answer ?? "", by: d.decidedBy?.name ?? "a person" }, isError: false };
  // Stopped before anyone decided, it never ran, as a call cut by a Stop.
  const code = d.status === "cancelled" ? "INTERRUPTED" : "TOOL_DENIED";
  return { output: toolErrorOutput(code, refusalText(d)), isError: true, errorCode: code };
}

/**
 * The calls a resuming driver must finish before the turn goes on: the last reply's calls
 * without a result, when the first of them has a request (the turn was parked). Null: the turn
 * was not parked (a crash left it open: turn-close.ts closes it).
 */
export async function parkedCalls(scope: CallScope, turnId: TurnId): Promise<{ messageId: string; calls: ToolCall[]; step: number } | null> {
  const open = unansweredToolCalls(scope.events, turnId);
  const first = open[0];
  if (!first || !(await decisionOf(scope.db.sql, toolCallKey(first.messageId, first.call.toolCallId)))) return null;
  return { messageId: first.messageId, calls: open.filter((c) => c.messageId === first.messageId).map((c) => c.call), step: stepOf(scope.events, turnId) };
}

/** The step the turn is in: its last step_start's. */
function stepOf(events: readonly SessionEvent[], turnId: TurnId): number {
  for (let i = events.length - 1; i >= 0; i--) {
    const p = events[i]!.payload;
    if (p.kind === "step_start" && p.turnId === turnId) return p.step;
  }
  return 0;
}

/**
 * A stop reached a parked turn: each call still without a result gets one saying it did not run
 * (and who stopped it), before the turn closes as aborted.
 */
export async function notRunResults(scope: CallScope, turnId: TurnId, messageId: string, calls: readonly ToolCall[]): Promise<EventPayload[]> {
  const out: EventPayload[] = [];
  for (const call of calls) {
    const callKey = toolCallKey(messageId, call.toolCallId);
    const d = await decisionOf(scope.db.sql, callKey);
    // An approved call a crash cut short may have run: its tool's records say what it did.
    const ran =
      d?.status === "approved"
        ? await recordedOutcome(scope, turnId, call.toolName, callKey)
        : null;
    const outcome: ToolOutcome =
      ran ??
      (d && d.status !== "pending" && d.status !== "approved"
        ? decidedOutcome(d)
        : { output: toolErrorOutput("INTERRUPTED", "Not run: the turn was stopped before this call ran."), isError: true, errorCode: "INTERRUPTED" });
    out.push(toolResultEvent(turnId, call, outcome));
  }
  return out;
}
