import { z } from "zod";
import type { SessionId } from "../../ids";
import { sessionReader } from "../../live/feed-readers";
import { FEED_REREAD_MS } from "../../live/session-feed";
import { ModelOptionSchema } from "../../models/catalog";
import { ModelChoiceSchema, SCRIPTED_CHOICE } from "../../models/choice";
import { assertModelAvailable, availableModels } from "../../models/registry";
import { SessionEventSchema } from "../../runtime/events";
import { InboxItemSchema } from "../../runtime/inbox";
import { readEventsBefore } from "../../runtime/session-log";
import { getSessionWithInbox, listSessions, SessionViewSchema, SessionWithInboxSchema } from "../../runtime/sessions";
import { teamsOf } from "../../people/team-people";
import { createTeam, editQueuedAs, forkTeam, promptAs, removeQueuedAs, steerNowAs, stopAs } from "../../team/person-actions";
import { boundedText, int4, int4String } from "../../../shared/input-guard";
import { LIMITS } from "../../../shared/limits";
import { personProcedure, router, type TrpcContext } from "../init";
import { feedAccess, sessionAccess } from "../access";
import { liveFeed } from "../live-feed";
import { ListInput, SessionIdInput, TitleInput } from "../schemas";

// Thin procedures: validate, check access (trpc/access.ts), call the domain function, return.
// Schemas sit beside each one. Watching needs any role in the session's team, acting needs
// owner or member; every action records the person.

const sessionId = SessionIdInput;
const SessionRef = z.object({ sessionId });
const itemId = z.string().min(1).max(64);
const promptText = boundedText(LIMITS.promptBytes, "Prompt", { trim: true });


/** Local wake: skip waiting for the NOTIFY round trip when this process can drive the agent. */
function wakeLocal(ctx: TrpcContext, id: SessionId) {
  void ctx.runtime.wake(id);
}

export const sessionRouter = router({
  models: personProcedure
    .output(z.array(ModelOptionSchema))
    .query(({ ctx }) => availableModels(ctx.env)),

  /** The sessions of the teams the person belongs to. */
  list: personProcedure
    .input(ListInput)
    .output(z.array(SessionViewSchema))
    .query(async ({ ctx, input }) => listSessions(ctx.db, { limit: input?.limit, teamIds: [...(await teamsOf(ctx.db, ctx.person.id)).keys()] })),

  get: personProcedure
    .input(SessionRef)
    .output(SessionWithInboxSchema)
    .query(async ({ ctx, input }) => {
      await sessionAccess(ctx, input.sessionId, "view");
      return getSessionWithInbox(ctx.db.sql, input.sessionId);
    }),

  /** A new team (its Lead session), owned by whoever creates it. */
  create: personProcedure
    .input(z.object({ title: TitleInput, model: ModelChoiceSchema.default(SCRIPTED_CHOICE) }))
    .output(SessionViewSchema)
    .mutation(({ ctx, input }) => {
      assertModelAvailable(ctx.env, input.model);
      return createTeam(ctx.db, { ...input, by: ctx.person });
    }),

  /** A transcript page: the newest `limit` events before `beforeSeq`, ascending. */
  transcript: personProcedure
    .input(SessionRef.extend({ beforeSeq: int4(1).optional(), limit: z.number().int().min(1).max(1000).default(200) }))
    .output(z.object({ events: z.array(SessionEventSchema), hasMore: z.boolean() }))
    .query(async ({ ctx, input }) => {
      await sessionAccess(ctx, input.sessionId, "view");
      const events = await readEventsBefore(ctx.db.sql, input.sessionId, input.beforeSeq, input.limit);
      return { events, hasMore: (events[0]?.seq ?? 1) > 1 };
    }),

  /** Queue adapter: the prompt is its own turn; the model sees who wrote it. */
  prompt: personProcedure
    .input(SessionRef.extend({ text: promptText }))
    .output(InboxItemSchema)
    .mutation(async ({ ctx, input }) => {
      const by = await sessionAccess(ctx, input.sessionId, "act");
      const item = await promptAs(ctx.db, input.sessionId, { text: input.text, by, traceparent: ctx.traceparent?.() });
      wakeLocal(ctx, input.sessionId);
      return item;
    }),

  editQueued: personProcedure
    .input(SessionRef.extend({ itemId, text: promptText }))
    .output(InboxItemSchema)
    .mutation(async ({ ctx, input }) => {
      const by = await sessionAccess(ctx, input.sessionId, "act");
      return editQueuedAs(ctx.db, input.sessionId, input.itemId, input.text, by);
    }),

  removeQueued: personProcedure
    .input(SessionRef.extend({ itemId }))
    .output(z.object({ removed: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      const by = await sessionAccess(ctx, input.sessionId, "act");
      await removeQueuedAs(ctx.db, input.sessionId, input.itemId, by);
      return { removed: true as const };
    }),

  steerNow: personProcedure
    .input(SessionRef.extend({ itemId }))
    .output(z.object({ steered: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      const by = await sessionAccess(ctx, input.sessionId, "act");
      await steerNowAs(ctx.db, input.sessionId, input.itemId, by);
      wakeLocal(ctx, input.sessionId);
      return { steered: true as const };
    }),

  stop: personProcedure
    .input(SessionRef)
    .output(z.object({ aborting: z.boolean() }))
    .mutation(async ({ ctx, input }) => {
      const by = await sessionAccess(ctx, input.sessionId, "act");
      const result = await stopAs(ctx.db, input.sessionId, by);
      void ctx.runtime.checkAbort(input.sessionId);
      return result;
    }),

  /** A new team from the session's completed turns, owned by whoever forks it. */
  fork: personProcedure
    .input(SessionRef.extend({ throughSeq: int4(1).optional(), title: TitleInput.optional() }))
    .output(SessionViewSchema)
    .mutation(async ({ ctx, input }) => {
      const by = await sessionAccess(ctx, input.sessionId, "act");
      return forkTeam(ctx.db, input.sessionId, { throughSeq: input.throughSeq, title: input.title, by });
    }),

  /**
   * Live feed of one session: every event after `lastEventId` (the seq), in order, then new
   * ones as they commit, plus the session state (status, inbox) whenever it changes. A
   * reconnect resumes from the last event id: no gap, no duplicate. Every feed of a session
   * in this process shares one reader (live/session-feed.ts); a feed further back than its
   * memory reads rows by seq itself. Access is re-checked on people changes and every
   * FEED_REREAD_MS.
   */
  live: personProcedure
    .input(SessionRef.extend({ lastEventId: int4String.nullish() }))
    .subscription(async ({ ctx, input, signal }) => {
      // Checked before the feed starts, so a refusal is the typed NOT_FOUND, not a broken stream.
      const { teamId } = await sessionAccess(ctx, input.sessionId, "view");
      const id = input.sessionId;
      const access = () => feedAccess(ctx, (db) => sessionAccess(ctx, id, "view", db));
      return liveFeed(ctx, { teamId, access, open: () => sessionReader(ctx, id, input.lastEventId ?? null), signal, recheckMs: FEED_REREAD_MS });
    }),
});
