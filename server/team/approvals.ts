import { z } from "zod";
import { inTx, type Db } from "../db/client";
import type { SqlRunner } from "../db/sql";
import type { SessionId } from "../ids";
import { recordAction, type HumanActor } from "../people/actions";
import { membershipOf } from "../members/membership";
import { APPROVAL_KINDS, settleApproval } from "../runtime/approvals";
import { writeToolMode } from "./tool-policy";

// What waits for people in a team (SPEC.md §17): tool calls to approve and questions to answer,
// each decided once (runtime/approvals.ts settles it; this module attributes it). The room
// shows them live (live/team-feed.ts), newest last.

export const WaitingViewSchema = z.object({
  id: z.string(),
  kind: z.enum(APPROVAL_KINDS),
  /** The member who asked. */
  member: z.string(),
  sessionId: z.string(),
  toolName: z.string(),
  arguments: z.unknown(),
  taskIds: z.array(z.string()),
  createdAt: z.date(),
});
export type WaitingView = z.infer<typeof WaitingViewSchema>;

const WaitingRows = z.array(
  z.object({
    id: z.string(),
    kind: z.enum(APPROVAL_KINDS),
    member: z.string(),
    session_id: z.string(),
    tool_name: z.string(),
    arguments: z.unknown(),
    task_ids: z.array(z.string()).nullable(),
    created_at: z.date(),
  }),
);

/** The team's pending approvals and questions, oldest first. */
export async function pendingRequests(db: SqlRunner, teamId: SessionId): Promise<WaitingView[]> {
  const rows = WaitingRows.parse(
    await db.$queryRaw`SELECT a.id, a.kind, coalesce(s.member_name, 'lead') AS member, a.session_id, a.tool_name, a.arguments, a.task_ids, a.created_at
      FROM approvals a JOIN sessions s ON s.id = a.session_id
      WHERE a.team_id = ${teamId} AND a.status = 'pending' ORDER BY a.created_at, a.id`,
  );
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    member: r.member,
    sessionId: r.session_id,
    toolName: r.tool_name,
    arguments: r.arguments,
    taskIds: r.task_ids ?? [],
    createdAt: r.created_at,
  }));
}

/**
 * Approves or denies a waiting tool call (the first decision wins). `alwaysAllow` with an
 * approval also sets the tool to `allow` in the team, in the same transaction (owners only:
 * the router checks).
 */
export async function decideApproval(
  db: Db,
  by: HumanActor,
  approvalId: string,
  d: { approve: boolean; note: string | null; alwaysAllow: boolean },
): Promise<void> {
  await inTx(db, async (tx) => {
    const settled = await settleApproval(tx, by.teamId, approvalId, by.person, { status: d.approve ? "approved" : "denied", note: d.note });
    const member = (await membershipOf(tx, settled.sessionId)).name;
    await recordAction(tx, by, "approval_decided", {
      sessionId: settled.sessionId,
      detail: { approved: d.approve, tool: settled.toolName, member, ...(d.note ? { note: d.note } : {}) },
    });
    if (d.approve && d.alwaysAllow) {
      await writeToolMode(tx, by, settled.toolName, "allow");
    }
  });
}

/** Answers a waiting question; the answer and the person's name are the tool's result. */
export async function answerQuestion(db: Db, by: HumanActor, approvalId: string, answer: string): Promise<void> {
  await inTx(db, async (tx) => {
    const settled = await settleApproval(tx, by.teamId, approvalId, by.person, { status: "answered", answer });
    await recordAction(tx, by, "question_answered", { sessionId: settled.sessionId, detail: { member: (await membershipOf(tx, settled.sessionId)).name } });
  });
}
