import { z } from "zod";
import type { SessionId } from "../../ids";
import { LIMITS } from "../../../shared/limits";
import { activityWaiter } from "../../live/activity";
import { teamMemberRefs, type MemberRef } from "../../members/membership";
import {
  encodeCursor,
  followTimeline,
  newFollower,
  TimelineCursorString,
  TimelineEntrySchema,
  TimelineFilterSchema,
  timelinePage,
  TimelinePageSchema,
  type TimelineFollower,
  type TimelineCursor,
  type TimelineFilter,
} from "../../team/timeline";
import { feedAccess, teamAccess } from "../access";
import { personProcedure, router, type PersonContext } from "../init";
import { liveFeed, type FeedReader } from "../live-feed";
import { TeamRef } from "../schemas";

// The team timeline (team/timeline/): a page of earlier entries, and the live feed, which
// opens with the newest page and then sends what commits, resuming from its last id.

export const TimelineLiveMessageSchema = z.discriminatedUnion("type", [
  /** The newest entries (a fresh feed): they replace whatever the client held. */
  z.object({ type: z.literal("page"), entries: z.array(TimelineEntrySchema), earlier: z.string().nullable() }),
  /** New entries, and entries sent before that changed (a message's state): merge by id. */
  z.object({ type: z.literal("entries"), entries: z.array(TimelineEntrySchema) }),
]);
export type TimelineLiveMessage = z.infer<typeof TimelineLiveMessageSchema>;

/** The least time between two reads of one feed: a busy team streams many events a second. */
const MIN_READ_INTERVAL_MS = 250;
/** The longest a feed waits without a read (a hint lost, a teammate added since its last read). */
const IDLE_READ_MS = 5_000;

export const timelineRouter = router({
  page: personProcedure
    .input(
      TeamRef.extend(TimelineFilterSchema.shape).extend({
        before: TimelineCursorString.optional(),
        limit: z.number().int().min(1).max(LIMITS.timelinePageMax).optional(),
      }),
    )
    .output(TimelinePageSchema)
    .query(async ({ ctx, input }) => {
      const { teamId } = await teamAccess(ctx, input.teamId, "view");
      return timelinePage(ctx.db, teamId, { before: input.before, limit: input.limit, filter: { members: input.members, kinds: input.kinds } });
    }),

  /**
   * Live timeline: the newest page, then every entry as it commits (and messages again when
   * their state changes). A reconnect with the last event id resumes where it was.
   */
  live: personProcedure
    .input(TeamRef.extend(TimelineFilterSchema.shape).extend({ lastEventId: TimelineCursorString.nullish() }))
    .subscription(async ({ ctx, input, signal }) => {
      const { teamId } = await teamAccess(ctx, input.teamId, "view");
      return timelineFeed(ctx, teamId, { members: input.members, kinds: input.kinds }, input.lastEventId ?? null, signal);
    }),
});

/**
 * The timeline's feed: each viewer follows with their own filter, reading only what committed
 * after their cursor (team/timeline/follow.ts followTimeline), at most every MIN_READ_INTERVAL_MS.
 */
function timelineFeed(ctx: PersonContext, id: SessionId, filter: TimelineFilter, from: TimelineCursor | null, signal: AbortSignal | undefined) {
  const open = (): FeedReader<TimelineFollower, unknown, TimelineLiveMessage> => {
    let refs: MemberRef[] = [];
    return {
      start: async () => newFollower(from),
      async wake() {
        // The Lead's events and the team's board, mailbox, workspace and people changes come on the team id.
        refs = await teamMemberRefs(ctx.db, id);
        const waiters = [
          activityWaiter(ctx.hub, id, ["event", "state", "team", "board", "mail", "people", "actions", "workspace"]),
          ...refs.filter((r) => r.sessionId !== id).map((r) => activityWaiter(ctx.hub, r.sessionId, ["event"])),
        ];
        return { fired: Promise.race(waiters.map((w) => w.fired)), dispose: () => waiters.forEach((w) => w.dispose()) };
      },
      // Checked before every read: a person removed from the team loses the feed at once.
      recheck: () => true,
      async read(follower) {
        const read = await followTimeline(ctx.db, id, filter, follower, refs);
        const cursor = encodeCursor(follower.cursor!);
        if (read.type === "page") return { messages: [{ id: cursor, data: { type: "page", entries: read.entries, earlier: read.earlier } }], cursor: follower, more: true };
        const messages = read.entries.length > 0 ? [{ id: cursor, data: { type: "entries" as const, entries: read.entries } }] : [];
        return { messages, cursor: follower, more: read.more };
      },
    };
  };
  const access = () => feedAccess(ctx, (db) => teamAccess(ctx, id, "view", db));
  return liveFeed(ctx, { teamId: null, access, open, signal, recheckMs: IDLE_READ_MS, minIntervalMs: MIN_READ_INTERVAL_MS });
}
