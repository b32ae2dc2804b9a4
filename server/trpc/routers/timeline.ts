import { z } from "zod";
import { LIMITS } from "../../../shared/limits";
import { timelineReader } from "../../live/feed-readers";
import { TimelineCursorString, TimelineFilterSchema, timelinePage, TimelinePageSchema } from "../../team/timeline";
import { feedAccess, teamAccess } from "../access";
import { personProcedure, router } from "../init";
import { liveFeed } from "../live-feed";
import { TeamRef } from "../schemas";

// The team timeline (team/timeline/): a page of earlier entries, and the live feed, which
// opens with the newest page and then sends what commits, resuming from its last id.

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
      const filter = { members: input.members, kinds: input.kinds };
      const access = () => feedAccess(ctx, (db) => teamAccess(ctx, teamId, "view", db));
      const open = () => timelineReader(ctx, teamId, filter, input.lastEventId ?? null);
      return liveFeed(ctx, { teamId: null, access, open, signal, recheckMs: IDLE_READ_MS, minIntervalMs: MIN_READ_INTERVAL_MS });
    }),
});
