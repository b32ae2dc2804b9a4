import { z } from "zod";
import { asJson, type DbOrTx, type Tx } from "../db/client";
import type { SessionId } from "../ids";
import { AppError } from "../errors";
import { notifyActivity } from "../db/notify";
import { AUDITED_TEAM_ACTION_KINDS } from "../../shared/audit-kinds";
import { isAudited, recordAudit } from "./audit";
import type { Person } from "./person";
import { refusalFor, TeamRoleSchema, type Need } from "./roles";

// The record of every human action (docs/SPEC.md §13 Attribution): written in the action's own
// transaction, so an action and the name of who did it commit together or not at all.

export const PersonActionKindSchema = z.enum([
  "prompt",
  "queue_edited",
  "queue_removed",
  "steer_now",
  "stop",
  "team_stopped",
  "task_changed",
  "file_changed",
  "teammate_added",
  "fork",
  // …and every action that is audited too.
  ...AUDITED_TEAM_ACTION_KINDS,
]);
export type PersonActionKind = z.infer<typeof PersonActionKindSchema>;

/**
 * The role each action needs, re-checked inside the action's own transaction (the request's
 * access check ran before it): a person removed or demoted meanwhile has the whole action
 * rolled back. The share lock on their row orders the two: removal waits for the action, or
 * the action sees the removal. Null: the action makes the role itself.
 */
const NEEDS: Record<PersonActionKind, Need | null> = {
  prompt: "act",
  queue_edited: "act",
  queue_removed: "act",
  steer_now: "act",
  stop: "act",
  team_stopped: "act",
  task_changed: "act",
  file_changed: "act",
  teammate_added: "act",
  fork: "act",
  team_created: null,
  role_changed: "own",
  person_removed: "own",
  left: "view",
  joined: null,
  invite_created: "own",
  invite_revoked: "own",
  budget_set: "act",
  tool_policy_set: "own",
  approval_decided: "act",
  question_answered: "act",
  webhook_added: "own",
  webhook_removed: "own",
  plan_decided: "act",
  mcp_server_added: "own",
  mcp_server_removed: "own",
  memory_decided: "act",
  memory_edited: "act",
  memory_deleted: "act",
  memory_settings_set: "own",
  routine_created: "act",
  routine_changed: "act",
  routine_deleted: "act",
};

export const PersonActionViewSchema = z.object({
  id: z.string(),
  sessionId: z.string().nullable(),
  userId: z.string(),
  userName: z.string(),
  action: PersonActionKindSchema,
  detail: z.record(z.string(), z.unknown()),
  createdAt: z.date(),
});
export type PersonActionView = z.infer<typeof PersonActionViewSchema>;

/** A person acting in a team: what every attributed domain function takes. */
export interface HumanActor {
  person: Person;
  teamId: SessionId;
}

export async function recordAction(
  tx: Tx,
  by: HumanActor,
  action: PersonActionKind,
  at: { sessionId?: SessionId; detail?: Record<string, unknown> } = {},
): Promise<void> {
  const need = NEEDS[action];
  if (need) await assertStillAllowed(tx, by, need, at.sessionId);
  // The room's recent actions re-read on this alone: no other change adds to them.
  await notifyActivity(tx, by.teamId, "actions");
  await tx.personAction.create({
    data: {
      teamId: by.teamId,
      sessionId: at.sessionId ?? null,
      userId: by.person.id,
      userName: by.person.name,
      action,
      detail: asJson(at.detail ?? {}),
    },
  });
  // Security-relevant ones also go to the audit log, in the same transaction.
  if (isAudited(action)) {
    await recordAudit(tx, { kind: action, actor: { id: by.person.id, name: by.person.name }, teamId: by.teamId, detail: at.detail });
  }
}

const RoleRows = z.array(z.object({ role: TeamRoleSchema }));

/** Refused as the request's own check would have: outside the team, the session or team is not found. */
async function assertStillAllowed(tx: Tx, by: HumanActor, need: Need, sessionId: SessionId | undefined): Promise<void> {
  const [row] = RoleRows.parse(await tx.$queryRaw`SELECT role FROM team_people WHERE team_id = ${by.teamId} AND user_id = ${by.person.id} FOR SHARE`);
  if (!row) {
    throw sessionId
      ? new AppError("SESSION_NOT_FOUND", `Session ${sessionId} not found`, { sessionId })
      : new AppError("TEAM_NOT_FOUND", `No team ${by.teamId}`, { teamId: by.teamId });
  }
  const refusal = refusalFor(need, row.role);
  if (refusal) throw refusal;
}

/** The team's most recent human actions, newest first. */
export async function recentActions(db: DbOrTx, teamId: SessionId, limit = 50): Promise<PersonActionView[]> {
  const rows = await db.personAction.findMany({ where: { teamId }, orderBy: { id: "desc" }, take: limit });
  return rows.map((r) => PersonActionViewSchema.parse({ ...r, id: String(r.id) }));
}
