import { tracked } from "@trpc/server";
import { z } from "zod";
import { abortableWait } from "../../abortable";
import type { SessionId } from "../../ids";
import { LIMITS } from "../../limits";
import { accessWaiter, activityWaiter } from "../../live/activity";
import { teamMemberRefs } from "../../team/membership";
import {
  encodeCursor,
  followTimeline,
  newFollower,
  TimelineCursorString,
  TimelineEntrySchema,
  TimelineFilterSchema,
  timelinePage,
  TimelinePageSchema,
  type TimelineCursor,
  type TimelineFilter,
} from "../../team/timeline";
import { feedAccess, teamAccess } from "../access";
import { personProcedure, router, type PersonContext } from "../init";
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

async function* timelineFeed(ctx: PersonContext, id: SessionId, filter: TimelineFilter, from: TimelineCursor | null, signal: AbortSignal | undefined) {
  const follower = newFollower(from);
  while (!signal?.aborted) {
    // The Lead's events and the team's board, mailbox, workspace and people changes come on the team id.
    const refs = await teamMemberRefs(ctx.db, id);
    const waiters = [
      activityWaiter(ctx.hub, id, ["event", "state", "team", "board", "mail", "people", "actions", "workspace"]),
      accessWaiter(ctx.hub, ctx.person.id, null),
      ...refs.filter((r) => r.sessionId !== id).map((r) => activityWaiter(ctx.hub, r.sessionId, ["event"])),
    ];
    try {
      // Re-checked on every read: a person removed from the team loses the feed at once.
      await feedAccess(ctx, (db) => teamAccess(ctx, id, "view", db));
      const started = Date.now();
      const read = await followTimeline(ctx.db, id, filter, follower, refs);
      const cursor = encodeCursor(follower.cursor!);
      if (read.type === "page") {
        yield tracked(cursor, { type: "page", entries: read.entries, earlier: read.earlier } satisfies TimelineLiveMessage);
        continue;
      }
      if (read.entries.length > 0) yield tracked(cursor, { type: "entries", entries: read.entries } satisfies TimelineLiveMessage);
      if (read.more) continue;
      await Promise.race(waiters.map((w) => w.wait(5_000, signal)));
      await abortableWait({ ms: started + MIN_READ_INTERVAL_MS - Date.now(), signal });
    } finally {
      for (const w of waiters) w.dispose();
    }
  }
}
