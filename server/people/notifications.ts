import { z } from "zod";
import type { Db, DbOrTx } from "../db/client";
import { Prisma } from "../db/generated/client";
import type { SqlRunner } from "../db/sql";
import { newNotificationStem, type UserId } from "../ids";
import { LIMITS } from "../../shared/limits";
import { credentialsKey, notifyActivity, notifyColumnSql } from "../db/notify";
import { TeamEventKindSchema, type TeamEventKind } from "../runtime/team-events";

// Each person's notifications across all their teams (SPEC.md §17): one row per person and team
// event (team/dispatch.ts writes them, once), read and marked read by that person only. A
// person's settings say which kinds of event they do not want. Every change is announced on the
// person's key, which their live feed (and unread count) follows.

const NOTIFICATION_PAGE = LIMITS.notificationPage;

export const NotificationViewSchema = z.object({
  id: z.string(),
  kind: TeamEventKindSchema,
  teamId: z.string(),
  title: z.string(),
  body: z.string(),
  /** approval.requested / question.asked: the request, and whether it still waits. */
  approvalId: z.string().nullable(),
  /** memory.proposed: the proposal (pending while it waits for a decision). */
  memoryId: z.string().nullable(),
  pending: z.boolean(),
  createdAt: z.date(),
  read: z.boolean(),
});
export type NotificationView = z.infer<typeof NotificationViewSchema>;

const NotificationRow = z.object({
  unread: z.number().int(),
  id: z.string(),
  kind: TeamEventKindSchema,
  team_id: z.string(),
  title: z.string(),
  body: z.string(),
  approval_id: z.string().nullable(),
  memory_id: z.string().nullable(),
  pending: z.boolean(),
  created_at: z.date(),
  read_at: z.date().nullable(),
});
/** A page's rows, each with the unread count; a page without items is one row of the count alone. */
const Rows = z.array(z.union([NotificationRow, z.object({ unread: z.number().int(), id: z.null() })]));
const CountRows = z.array(z.object({ n: z.number().int() }));

/** The person's newest notifications (older than `before`, a notification id, to page back) and how many are unread. */
export async function listNotifications(
  db: SqlRunner,
  userId: UserId,
  opts: { before?: string; limit?: number } = {},
): Promise<{ items: NotificationView[]; unread: number }> {
  const limit = Math.min(opts.limit ?? NOTIFICATION_PAGE, NOTIFICATION_PAGE);
  const after = opts.before
    ? Prisma.sql`AND (n.created_at, n.id) < (SELECT created_at, id FROM notifications WHERE id = ${opts.before} AND user_id = ${userId})`
    : Prisma.empty;
  // One statement, one snapshot: the page and the unread count always agree (the count comes on
  // the one row a page without items still has).
  const rows = Rows.parse(
    await db.$queryRaw`SELECT c.unread, n.* FROM (SELECT count(*)::int AS unread FROM notifications WHERE user_id = ${userId} AND read_at IS NULL) c
      LEFT JOIN LATERAL (SELECT n.id, n.kind, n.team_id, n.title, n.body, n.approval_id, n.memory_id, n.created_at, n.read_at,
          COALESCE(a.status = 'pending', m.status = 'proposed', false) AS pending
        FROM notifications n LEFT JOIN approvals a ON a.id = n.approval_id LEFT JOIN memories m ON m.id = n.memory_id
        WHERE n.user_id = ${userId} ${after}
        ORDER BY n.created_at DESC, n.id DESC LIMIT ${limit}) n ON true
      ORDER BY n.created_at DESC, n.id DESC`,
  );
  const items = rows.flatMap((r) =>
    "kind" in r
      ? [{ id: r.id, kind: r.kind, teamId: r.team_id, title: r.title, body: r.body, approvalId: r.approval_id, memoryId: r.memory_id, pending: r.pending, createdAt: r.created_at, read: r.read_at !== null }]
      : [],
  );
  return { items, unread: rows[0]!.unread };
}

/** Marks the person's notifications read: these ids (others' are left alone), or all. */
export async function markRead(db: Db, userId: UserId, which: { ids: readonly string[] } | { all: true }): Promise<number> {
  return db.sqlTx(async (tx) => {
    const only = "ids" in which ? Prisma.sql`AND id = ANY(${[...which.ids]}::text[])` : Prisma.empty;
    const n = await tx.$executeRaw`UPDATE notifications SET read_at = now() WHERE user_id = ${userId} AND read_at IS NULL ${only}`;
    if (n > 0) await notifyActivity(tx, credentialsKey(userId), "notifications");
    return n;
  });
}

export const NotificationSettingsSchema = z.object({ muted: z.array(TeamEventKindSchema) });
export type NotificationSettings = z.infer<typeof NotificationSettingsSchema>;

export async function notificationSettings(db: DbOrTx, userId: UserId): Promise<NotificationSettings> {
  const row = await db.notificationSetting.findUnique({ where: { userId } });
  return NotificationSettingsSchema.parse({ muted: row?.muted ?? [] });
}

export async function setNotificationSettings(db: DbOrTx, userId: UserId, settings: NotificationSettings): Promise<NotificationSettings> {
  const muted = [...new Set(settings.muted)].sort();
  await db.notificationSetting.upsert({ where: { userId }, create: { userId, muted }, update: { muted, updatedAt: new Date() } });
  return { muted };
}

/**
 * In the dispatcher's transaction: one notification of event `eventId` for each of `userIds`
 * that has not muted `kind` (once per person and event, however often this runs), each person
 * told on their key.
 */
export async function notifyPeople(
  tx: SqlRunner,
  userIds: readonly string[],
  n: { eventId: bigint; teamId: string; kind: TeamEventKind; title: string; body: string; approvalId: string | null; memoryId: string | null },
): Promise<number> {
  if (userIds.length === 0) return 0;
  const rows = await tx.$queryRaw`WITH added AS (
      INSERT INTO notifications (id, user_id, team_id, event_id, kind, title, body, approval_id, memory_id)
      SELECT ${newNotificationStem()} || '_' || u.n, u.id, ${n.teamId}, ${n.eventId}, ${n.kind}, ${n.title}, ${n.body}, ${n.approvalId}, ${n.memoryId}
      FROM unnest(${[...userIds]}::text[]) WITH ORDINALITY AS u(id, n)
      WHERE NOT EXISTS (SELECT 1 FROM notification_settings s WHERE s.user_id = u.id AND ${n.kind} = ANY(s.muted))
      ON CONFLICT (user_id, event_id) DO NOTHING
      RETURNING user_id
    )
    SELECT count(*)::int AS n FROM (SELECT ${notifyColumnSql(Prisma.sql`'user:' || added.user_id`, "notifications")} FROM added) told`;
  return CountRows.parse(rows)[0]!.n;
}
