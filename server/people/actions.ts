import { z } from "zod";
import { asJson, type DbOrTx, type Tx } from "../db/client";
import type { SessionId } from "../ids";
import type { Person } from "./person";

// The record of every human action (docs/SPEC.md §13 Attribution): written in the action's own
// transaction, so an action and the name of who did it commit together or not at all.

export const PersonActionKindSchema = z.enum([
  "prompt",
  "queue_edited",
  "queue_removed",
  "steer_now",
  "stop",
  "task_changed",
  "teammate_added",
  "fork",
  "team_created",
  "role_changed",
  "person_removed",
  "left",
  "joined",
  "invite_created",
  "invite_revoked",
]);
export type PersonActionKind = z.infer<typeof PersonActionKindSchema>;

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
}

/** The team's most recent human actions, newest first. */
export async function recentActions(db: DbOrTx, teamId: SessionId, limit = 50): Promise<PersonActionView[]> {
  const rows = await db.personAction.findMany({ where: { teamId }, orderBy: { id: "desc" }, take: limit });
  return rows.map((r) => PersonActionViewSchema.parse({ ...r, id: String(r.id) }));
}
