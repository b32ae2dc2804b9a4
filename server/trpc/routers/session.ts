import { tracked } from "@trpc/server";
import { z } from "zod";
import type { SessionId } from "../../ids";
import { activityWaiter } from "../../live/activity";
import { ModelOptionSchema } from "../../models/catalog";
import { ModelChoiceSchema, SCRIPTED_CHOICE } from "../../models/choice";
import { assertModelAvailable, availableModels } from "../../models/registry";
import { SessionEventSchema } from "../../runtime/events";
import { editQueued, InboxItemSchema, listInbox, removeQueued, steerNow } from "../../runtime/inbox";
import { readEventsAfter, readEventsBefore } from "../../runtime/session-log";
import {
  createSession,
  forkSession,
  getSession,
  listSessions,
  promptSession,
  requestAbort,
  SessionViewSchema,
} from "../../runtime/sessions";
import { inTx } from "../../db/client";
import { boundedText, int4, int4String } from "../../input-guard";
import { LIMITS } from "../../limits";
import { personProcedure, router, type PersonContext, type TrpcContext } from "../init";
import { feedAccess, sessionAccess } from "../access";
import { ListInput, SessionIdInput, TitleInput } from "../schemas";

// Thin procedures: validate, check access (trpc/access.ts), call the domain function, return.
// Schemas sit beside each one. Watching needs any role in the session's team, acting needs
// owner or member; every action records the person.

const sessionId = SessionIdInput;
const SessionRef = z.object({ sessionId });
const itemId = z.string().min(1).max(64);
const promptText = boundedText(LIMITS.promptBytes, "Prompt", { trim: true });

const StateSchema = z.object({ session: SessionViewSchema, inbox: z.array(InboxItemSchema) });
export const LiveMessageSchema = z.discriminatedUnion("type", [
  /** A batch of consecutive events; its tracked id is the last one's seq. */
  z.object({ type: z.literal("events"), events: z.array(SessionEventSchema) }),
  z.object({ type: z.literal("state"), state: StateSchema }),
]);
export type LiveMessage = z.infer<typeof LiveMessageSchema>;

async function readState(ctx: TrpcContext, id: SessionId) {
  const [session, inbox] = await Promise.all([getSession(ctx.db, id), listInbox(ctx.db, id)]);
  return { session, inbox };
}

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
    .query(({ ctx, input }) => listSessions(ctx.db, { limit: input?.limit, userId: ctx.person.id })),

  get: personProcedure
    .input(SessionRef)
    .output(StateSchema)
    .query(async ({ ctx, input }) => {
      await sessionAccess(ctx, input.sessionId, "view");
      return readState(ctx, input.sessionId);
    }),

  /** A new team (its Lead session), owned by whoever creates it. */
  create: personProcedure
    .input(z.object({ title: TitleInput, model: ModelChoiceSchema.default(SCRIPTED_CHOICE) }))
    .output(SessionViewSchema)
    .mutation(({ ctx, input }) => {
      assertModelAvailable(ctx.env, input.model);
      return createSession(ctx.db, { ...input, by: ctx.person });
    }),

  /** A transcript page: the newest `limit` events before `beforeSeq`, ascending. */
  transcript: personProcedure
    .input(SessionRef.extend({ beforeSeq: int4(1).optional(), limit: z.number().int().min(1).max(1000).default(200) }))
    .output(z.object({ events: z.array(SessionEventSchema), hasMore: z.boolean() }))
    .query(async ({ ctx, input }) => {
      await sessionAccess(ctx, input.sessionId, "view");
      const events = await readEventsBefore(ctx.db, input.sessionId, input.beforeSeq, input.limit);
      return { events, hasMore: (events[0]?.seq ?? 1) > 1 };
    }),

  /** Queue adapter: the prompt is its own turn; the model sees who wrote it. */
  prompt: personProcedure
    .input(SessionRef.extend({ text: promptText }))
    .output(InboxItemSchema)
    .mutation(async ({ ctx, input }) => {
      const by = await sessionAccess(ctx, input.sessionId, "act");
      const item = await promptSession(ctx.db, input.sessionId, { text: input.text, by });
      wakeLocal(ctx, input.sessionId);
      return item;
    }),

  editQueued: personProcedure
    .input(SessionRef.extend({ itemId, text: promptText }))
    .output(InboxItemSchema)
    .mutation(async ({ ctx, input }) => {
      const by = await sessionAccess(ctx, input.sessionId, "act");
      return editQueued(ctx.db, input.sessionId, input.itemId, input.text, by);
    }),

  removeQueued: personProcedure
    .input(SessionRef.extend({ itemId }))
    .output(z.object({ removed: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      const by = await sessionAccess(ctx, input.sessionId, "act");
      await removeQueued(ctx.db, input.sessionId, input.itemId, by);
      return { removed: true as const };
    }),

  steerNow: personProcedure
    .input(SessionRef.extend({ itemId }))
    .output(z.object({ steered: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      const by = await sessionAccess(ctx, input.sessionId, "act");
      await inTx(ctx.db, (tx) => steerNow(tx, input.sessionId, input.itemId, by));
      wakeLocal(ctx, input.sessionId);
      return { steered: true as const };
    }),

  stop: personProcedure
    .input(SessionRef)
    .output(z.object({ aborting: z.boolean() }))
    .mutation(async ({ ctx, input }) => {
      const by = await sessionAccess(ctx, input.sessionId, "act");
      const result = await requestAbort(ctx.db, input.sessionId, "stop", by);
      void ctx.runtime.checkAbort(input.sessionId);
      return result;
    }),

  /** A new team from the session's completed turns, owned by whoever forks it. */
  fork: personProcedure
    .input(SessionRef.extend({ throughSeq: int4(1).optional(), title: TitleInput.optional() }))
    .output(SessionViewSchema)
    .mutation(async ({ ctx, input }) => {
      const by = await sessionAccess(ctx, input.sessionId, "act");
      return forkSession(ctx.db, input.sessionId, { ...input, by });
    }),

  /**
   * Live feed of one session: every event after `lastEventId` (the seq), in order, then new
   * ones as they commit, plus the session state (status, inbox) whenever it changes. A
   * reconnect resumes from the last event id: no gap, no duplicate. Notifications are only
   * hints; rows are read by seq, with a periodic re-read as a safety net.
   */
  live: personProcedure
    .input(SessionRef.extend({ lastEventId: int4String.nullish() }))
    .subscription(async ({ ctx, input, signal }) => {
      // Checked before the feed starts, so a refusal is the typed NOT_FOUND, not a broken stream.
      const { teamId } = await sessionAccess(ctx, input.sessionId, "view");
      return liveFeed(ctx, input.sessionId, teamId, input.lastEventId ? Number(input.lastEventId) : 0, signal);
    }),
});

async function* liveFeed(ctx: PersonContext, id: SessionId, teamId: SessionId, lastEventSeq: number, signal: AbortSignal | undefined) {
  let after = lastEventSeq;
  let lastState = "";
  while (!signal?.aborted) {
    const waiter = activityWaiter(ctx.hub, id);
    // A person removed from the team loses the feed at once: people changes wake it.
    const people = activityWaiter(ctx.hub, teamId, ["people"]);
    try {
      await feedAccess(ctx, () => sessionAccess(ctx, id, "view"));
      // Batches, not single events: a long history arrives in a few messages.
      const events = await readEventsAfter(ctx.db, id, after, 500);
      const last = events.at(-1);
      if (last) {
        after = last.seq;
        yield tracked(String(last.seq), { type: "events", events } satisfies LiveMessage);
      }
      const state = await readState(ctx, id);
      const key = JSON.stringify(state);
      if (key !== lastState) {
        lastState = key;
        yield tracked(String(after), { type: "state", state } satisfies LiveMessage);
      }
      if (events.length < 500) await Promise.race([waiter.wait(5_000, signal), people.wait(5_000, signal)]);
    } finally {
      waiter.dispose();
      people.dispose();
    }
  }
}
