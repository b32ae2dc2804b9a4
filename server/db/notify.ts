import { z } from "zod";
import { Prisma } from "./generated/client";
import type { SqlRunner } from "./sql";

// How the domain says "this changed": a Postgres NOTIFY on one channel, with a typed payload,
// sent in the writer's transaction (so exactly when it commits), or announced after the commit
// through an ActivityBus (server/live/activity.ts's hub carries it to this process's listeners
// at once and to other processes shortly after). A notification is only a hint that something
// changed: readers always re-read rows, so a lost or coalesced one loses nothing. Postgres
// holds a server-wide lock from a notifying transaction's commit until its commit record is
// flushed, so notifying commits never share a flush: the runtime's appends, several per step,
// announce instead of notifying in their own transactions.

export const ACTIVITY_CHANNEL = "agent_activity";

/**
 * inbox: input arrived or changed; abort: stop/interrupt requested; event: log appended;
 * state: the session's status changed; team: a team's roster or budget changed; board: its task
 * board; mail: its mailbox (these three are sent on the team id, which is also its Lead's
 * session id: the Lead's own state is unchanged; split, so a live feed re-reads only what moved);
 * people: a team's people, roles, invites or presence changed (sent on the team id); actions: a
 * person did something in the team (people/actions.ts: the record's row; on the team id);
 * workspace: a team's files changed (sent on the team id); spend: a step's usage was added to
 * the session's spend (the room's figures move; nothing a waiting agent acts on); credentials:
 * a sign-in session or API token of a person ended (sent on `credentialsKey`, by a trigger of
 * the auth_sessions and api_tokens tables: their feeds re-check at once); outbox: a team event
 * was recorded (runtime/team-events.ts; on TEAM_EVENTS_KEY: the dispatcher fans it out);
 * notifications: a person's notifications changed (on `credentialsKey`); memory: a team's
 * memories changed (memory/store.ts; on the team id).
 */
const ActivityKindSchema = z.enum([
  "inbox",
  "abort",
  "event",
  "state",
  "team",
  "board",
  "mail",
  "people",
  "actions",
  "workspace",
  "spend",
  "credentials",
  "outbox",
  "notifications",
  "memory",
]);
export type ActivityKind = z.infer<typeof ActivityKindSchema>;

/** The key a person's credential changes are sent on (the migration's trigger writes the same). */
export const credentialsKey = (userId: string): string => `user:${userId}`;

/** o: the announcing hub (ActivityHub.announce), which does not hear its own notification again. */
export const ActivityPayload = z.object({ s: z.string(), k: ActivityKindSchema, q: z.number().int().optional(), o: z.string().optional() });
export type Activity<E = unknown> = {
  sessionId: string;
  kind: ActivityKind;
  /** `event`: the newest seq the append committed (a reader that has it skips the read). */
  lastSeq?: number;
  /** `event`, in-process only: the committed events themselves (the writer's own copy). */
  events?: E[];
};

/** A notification's payload, as the hub reads it back. */
export function activityPayload(sessionId: string, kind: ActivityKind, lastSeq?: number, origin?: string): string {
  return JSON.stringify({ s: sessionId, k: kind, ...(lastSeq === undefined ? {} : { q: lastSeq }), ...(origin === undefined ? {} : { o: origin }) });
}

/** The notification as an SQL expression, so it can ride in a statement that has other work. */
export function notifySql(sessionId: string, kind: ActivityKind): Prisma.Sql {
  return Prisma.sql`pg_notify(${ACTIVITY_CHANNEL}, ${activityPayload(sessionId, kind)})`;
}

/**
 * The notification for a session id the statement itself reads (`sessionId` an SQL expression,
 * e.g. a column), with the payload activityPayload writes.
 */
export function notifyColumnSql(sessionId: Prisma.Sql, kind: ActivityKind): Prisma.Sql {
  return Prisma.sql`pg_notify(${ACTIVITY_CHANNEL}, json_build_object('s', ${sessionId}, 'k', ${kind}::text)::text)`;
}

/** Tells the people notified of a request (an approval, a memory: `column = id`) that it changed: their inboxes refresh. */
export async function notifyNotified(db: SqlRunner, column: "approval_id" | "memory_id", id: string): Promise<void> {
  await db.$executeRaw`SELECT ${notifyColumnSql(Prisma.sql`'user:' || user_id`, "notifications")} FROM notifications WHERE ${Prisma.raw(column)} = ${id}`;
}

/** Sent on commit of the surrounding transaction (Postgres semantics), never before. */
export async function notifyActivity(db: SqlRunner, sessionId: string, kind: ActivityKind, lastSeq?: number): Promise<void> {
  await db.$executeRaw`SELECT pg_notify(${ACTIVITY_CHANNEL}, ${activityPayload(sessionId, kind, lastSeq)})`;
}

/**
 * Announcements after the commit, and listening: what the domain needs of the process's hub
 * (live/activity.ts), given to it as configuration. `E`: what an `event` activity carries.
 */
export interface ActivityBus<E = unknown> {
  /** Tells this process's listeners at once and other processes shortly after. */
  announce(activity: Activity<E>): void;
  /** Listens to one session's (or key's) activity, or every activity with "*"; gives the unsubscribe. */
  on(sessionId: string, fn: (a: Activity<E>) => void): () => void;
}
