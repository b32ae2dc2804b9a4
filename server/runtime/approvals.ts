import { z } from "zod";
import { inTx, type Db, type DbOrTx } from "../db/client";
import type { SqlRunner } from "../db/sql";
import { AppError } from "../errors";
import { newApprovalId, type SessionId, type TurnId } from "../ids";
import { notifyActivity, notifyNotified } from "../db/notify";
import { PersonRefSchema } from "../person-ref";
import { agentEventStatement, excerpt } from "./team-events";

// Calls that wait for people (SPEC.md §17): a tool call under the team's `ask` policy waits for
// an approval, `ask_humans` for an answer. Parking records the request and marks the session
// waiting in one transaction under the lease; the turn stays open and nothing holds it (no
// driver, lease, connection or timer: lease.ts NEEDS_DRIVER leaves a waiting session alone).
// The first decision wins (compare-and-set on the pending row) and clears the wait in its own
// transaction, which makes the session need a driver again; that driver applies the decision
// to the call exactly once (agent.ts) and the turn goes on.

export const TOOL_MODES = ["allow", "ask", "off"] as const;
export type ToolMode = (typeof TOOL_MODES)[number];

export const APPROVAL_KINDS = ["approval", "question"] as const;
export type ApprovalKind = (typeof APPROVAL_KINDS)[number];

export const APPROVAL_STATUSES = ["pending", "approved", "denied", "answered", "cancelled", "expired"] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** What a session waits for while parked on a request of each kind. */
export const WAITING_FOR: Record<ApprovalKind, "approval" | "answer"> = { approval: "approval", question: "answer" };

export interface ParkRequest {
  sessionId: SessionId;
  turnId: TurnId;
  callKey: string;
  kind: ApprovalKind;
  toolName: string;
  arguments: unknown;
  taskIds: readonly string[];
}

/**
 * In the caller's transaction, after it checked its lease: the request (once per call: a
 * driver that parks the same call again finds it) and the session marked waiting. Returns the
 * request's status: `pending`, or the decision already taken on it.
 */
export async function parkCall(tx: SqlRunner, r: ParkRequest): Promise<ApprovalStatus> {
  const id = newApprovalId();
  await tx.$executeRaw`INSERT INTO approvals (id, team_id, session_id, turn_id, tool_call_key, kind, tool_name, arguments, task_ids)
    SELECT ${id}, team_id, id, ${r.turnId}, ${r.callKey}, ${r.kind}, ${r.toolName}, ${JSON.stringify(r.arguments ?? {})}::jsonb, ${[...r.taskIds]}::text[]
    FROM sessions WHERE id = ${r.sessionId}
    ON CONFLICT (tool_call_key) DO NOTHING`;
  const [row] = StatusRows.parse(await tx.$queryRaw`SELECT id, status, team_id FROM approvals WHERE tool_call_key = ${r.callKey}`);
  if (!row) throw new AppError("SESSION_NOT_FOUND", `Session ${r.sessionId} not found`, { sessionId: r.sessionId });
  if (row.status !== "pending") return row.status;
  await tx.$executeRaw`UPDATE sessions SET waiting_for = ${WAITING_FOR[r.kind]} WHERE id = ${r.sessionId}`;
  await notifyActivity(tx, row.team_id ?? r.sessionId, "team");
  // The team's people are told (once per request: its id is the event's key).
  const question = r.kind === "question" ? QuestionArgs.safeParse(r.arguments) : null;
  await tx.$queryRaw(
    agentEventStatement(
      r.sessionId,
      `approval:${row.id}`,
      question
        ? { kind: "question.asked", approvalId: row.id, member: "", question: excerpt(question.success ? question.data.question : "") }
        : { kind: "approval.requested", approvalId: row.id, member: "", toolName: r.toolName },
    ),
  );
  return "pending";
}

const StatusRows = z.array(z.object({ id: z.string(), status: z.enum(APPROVAL_STATUSES), team_id: z.string().nullable() }));
const QuestionArgs = z.object({ question: z.string() });

const DecisionRow = z
  .object({
    id: z.string(),
    kind: z.enum(APPROVAL_KINDS),
    status: z.enum(APPROVAL_STATUSES),
    decided_by: PersonRefSchema.nullable(),
    note: z.string().nullable(),
    answer: z.string().nullable(),
  })
  .transform(({ decided_by, ...r }) => ({ ...r, decidedBy: decided_by }));
/** A request and, once taken, its decision. */
export type Decision = z.output<typeof DecisionRow>;

/** The request recorded for a call, with its decision if one was taken; null when none was made. */
export async function decisionOf(db: SqlRunner, callKey: string): Promise<Decision | null> {
  const [r] = z.array(DecisionRow).parse(await db.$queryRaw`SELECT id, kind, status, decided_by, note, answer FROM approvals WHERE tool_call_key = ${callKey}`);
  return r ?? null;
}

export type Settlement =
  | { status: "approved" | "denied"; note: string | null }
  | { status: "answered"; answer: string }
  | { status: "cancelled"; note: string | null };

/**
 * The first decision wins: the pending row becomes `s` (attributed to `by`), the session stops
 * waiting once nothing of it is pending, and the runtime is woken to go on. A request that is
 * no longer pending is refused with APPROVAL_NOT_PENDING, naming how it ended.
 */
export async function settleApproval(
  tx: DbOrTx,
  teamId: string,
  approvalId: string,
  by: { id: string; name: string },
  s: Settlement,
): Promise<{ sessionId: SessionId; kind: ApprovalKind; toolName: string }> {
  const [row] = SettleRows.parse(
    await tx.$queryRaw`SELECT session_id, kind, status, tool_name, decided_by FROM approvals WHERE id = ${approvalId} AND team_id = ${teamId} FOR UPDATE`,
  );
  if (!row) throw new AppError("APPROVAL_NOT_FOUND", "No such approval or question in this team", { approvalId });
  if (row.status !== "pending") {
    const who = row.decided_by ? ` by ${row.decided_by.name}` : "";
    throw new AppError("APPROVAL_NOT_PENDING", `Already ${row.status}${who}`, { approvalId, status: row.status, decidedBy: row.decided_by });
  }
  const fits = s.status === "cancelled" || (row.kind === "question" ? s.status === "answered" : s.status !== "answered");
  if (!fits) throw new AppError("INVALID_INPUT", row.kind === "question" ? "A question is answered, not approved or denied" : "An approval is approved or denied, not answered");
  const note = "note" in s ? s.note : null;
  const answer = s.status === "answered" ? s.answer : null;
  await tx.$executeRaw`UPDATE approvals SET status = ${s.status}, decided_by = ${JSON.stringify({ id: by.id, name: by.name })}::jsonb,
      note = ${note}, answer = ${answer}, decided_at = now()
    WHERE id = ${approvalId}`;
  await tx.$executeRaw`UPDATE sessions SET waiting_for = NULL WHERE id = ${row.session_id}
    AND NOT EXISTS (SELECT 1 FROM approvals WHERE session_id = ${row.session_id} AND status = 'pending')`;
  // The session needs a driver again: the runtime hears it as input.
  await notifyActivity(tx, row.session_id, "inbox");
  await notifyActivity(tx, teamId, "team");
  // Everyone notified of the request sees it decided, live.
  await notifyNotified(tx, "approval_id", approvalId);
  return { sessionId: row.session_id as SessionId, kind: row.kind, toolName: row.tool_name };
}

const SettleRows = z.array(
  z.object({
    session_id: z.string(),
    kind: z.enum(APPROVAL_KINDS),
    status: z.enum(APPROVAL_STATUSES),
    tool_name: z.string(),
    decided_by: PersonRefSchema.nullable(),
  }),
);

/**
 * Requests pending longer than their team allows end expired (a refusal the model reads), each
 * as a decision would: the session stops waiting and the runtime is woken. Returns how many.
 */
export async function expireRequests(db: Db): Promise<number> {
  // One transaction: a request never ends expired while its session still waits for it.
  return inTx(db, async (tx) => {
    const rows = ExpiredRows.parse(
      await tx.$queryRaw`UPDATE approvals a SET status = 'expired', decided_at = now()
        FROM teams t
        WHERE t.id = a.team_id AND a.status = 'pending' AND t.approval_expiry_minutes IS NOT NULL
          AND a.created_at < now() - make_interval(mins => t.approval_expiry_minutes)
        RETURNING a.session_id, a.team_id`,
    );
    for (const r of rows) {
      await tx.$executeRaw`UPDATE sessions SET waiting_for = NULL WHERE id = ${r.session_id}
        AND NOT EXISTS (SELECT 1 FROM approvals WHERE session_id = ${r.session_id} AND status = 'pending')`;
      await notifyActivity(tx, r.session_id, "inbox");
      await notifyActivity(tx, r.team_id, "team");
    }
    return rows.length;
  });
}

const ExpiredRows = z.array(z.object({ session_id: z.string(), team_id: z.string() }));

/** A stop or interrupt of a waiting agent: its pending requests end cancelled, so a driver closes the turn. */
export async function cancelPending(tx: DbOrTx, sessionId: SessionId, by: { id: string; name: string } | null): Promise<number> {
  const n = await tx.$executeRaw`UPDATE approvals SET status = 'cancelled', decided_at = now(),
      decided_by = ${by ? JSON.stringify({ id: by.id, name: by.name }) : null}::jsonb
    WHERE session_id = ${sessionId} AND status = 'pending'`;
  if (n > 0) await tx.$executeRaw`UPDATE sessions SET waiting_for = NULL WHERE id = ${sessionId}`;
  return n;
}

/** What the model reads when a person said no (or the turn was stopped, or nobody decided in time). */
export function refusalText(d: Decision): string {
  const who = d.decidedBy?.name ?? "a person";
  if (d.status === "cancelled") return `Not run: the turn was stopped by ${who} before anyone decided.`;
  if (d.status === "expired") return "Not run: nobody decided in the time the team allows, so the request expired.";
  return `Denied by ${who}${d.note ? `: ${d.note}` : "."}`;
}
