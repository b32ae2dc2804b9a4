import { z } from "zod";
import { FEED_REREAD_MS } from "../../live/session-feed";
import { notificationsReader } from "../../live/feed-readers";
import {
  listNotifications,
  markRead,
  notificationSettings,
  NotificationSettingsSchema,
  NotificationViewSchema,
  setNotificationSettings,
} from "../../people/notifications";
import { LIMITS } from "../../../shared/limits";
import { feedSignedIn } from "../access";
import { personProcedure, router } from "../init";
import { liveFeed } from "../live-feed";

// A person's notifications across their teams (SPEC.md §17): only ever their own, so the
// sign-in is the whole authorisation. Deciding or answering from a notification goes through
// the approvals router, which checks the team role.

const Page = z.object({ items: z.array(NotificationViewSchema), unread: z.number().int() });
const NotificationId = z.string().min(1).max(64);

export const notificationsRouter = router({
  /** The newest notifications, or those before one (paging back), and the unread count. */
  list: personProcedure
    .input(z.object({ before: NotificationId.optional() }).optional())
    .output(Page)
    .query(({ ctx, input }) => listNotifications(ctx.db.sql, ctx.person.id, { before: input?.before })),

  /** Marks some (the person's own; others' ids are ignored) or all read. */
  markRead: personProcedure
    .input(z.union([z.object({ ids: z.array(NotificationId).min(1).max(LIMITS.notificationPage) }), z.object({ all: z.literal(true) })]))
    .output(z.object({ marked: z.number().int() }))
    .mutation(async ({ ctx, input }) => ({ marked: await markRead(ctx.db, ctx.person.id, input) })),

  settings: personProcedure.output(NotificationSettingsSchema).query(({ ctx }) => notificationSettings(ctx.db, ctx.person.id)),

  setSettings: personProcedure
    .input(NotificationSettingsSchema)
    .output(NotificationSettingsSchema)
    .mutation(({ ctx, input }) => setNotificationSettings(ctx.db, ctx.person.id, input)),

  /**
   * Live: the newest page and the unread count, again whenever they change (and every
   * FEED_REREAD_MS). A sign-out ends the feed at once.
   */
  live: personProcedure.subscription(({ ctx, signal }) =>
    liveFeed(ctx, { teamId: null, access: () => feedSignedIn(ctx), open: () => notificationsReader(ctx, ctx.person.id), signal, recheckMs: FEED_REREAD_MS }),
  ),
});
