import { tracked } from "@trpc/server";
import { z } from "zod";
import type { SessionId } from "../../ids";
import { activityWaiter } from "../../live/activity";
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
import { int4, int4String } from "../../input-guard";
import { boundedText, LIMITS } from "../../limits";
import { publicProcedure, router, type TrpcContext } from "../init";
import { ListInput, SessionIdInput, TitleInput } from "../schemas";

// Thin procedures: validate, call the domain function, return. Schemas sit beside each one.

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
  models: publicProcedure
    .output(z.array(ModelChoiceSchema.extend({ label: z.string() })))
    .query(({ ctx }) => availableModels(ctx.env)),

  list: publicProcedure
    .input(ListInput)
    .output(z.array(SessionViewSchema))
    .query(({ ctx, input }) => listSessions(ctx.db, input?.limit)),

  get: publicProcedure
    .input(SessionRef)
    .output(StateSchema)
    .query(({ ctx, input }) => readState(ctx, input.sessionId)),

  create: publicProcedure
    .input(z.object({ title: TitleInput, model: ModelChoiceSchema.default(SCRIPTED_CHOICE) }))
    .output(SessionViewSchema)
    .mutation(({ ctx, input }) => {
      assertModelAvailable(ctx.env, input.model);
      return createSession(ctx.db, input);
    }),

  /** A transcript page: the newest `limit` events before `beforeSeq`, ascending. */
  transcript: publicProcedure
    .input(SessionRef.extend({ beforeSeq: int4(1).optional(), limit: z.number().int().min(1).max(1000).default(200) }))
    .output(z.object({ events: z.array(SessionEventSchema), hasMore: z.boolean() }))
    .query(async ({ ctx, input }) => {
      await getSession(ctx.db, input.sessionId);
      const events = await readEventsBefore(ctx.db, input.sessionId, input.beforeSeq, input.limit);
      return { events, hasMore: (events[0]?.seq ?? 1) > 1 };
    }),

  prompt: publicProcedure
    .input(SessionRef.extend({ text: promptText, author: z.string().trim().max(64).optional() }))
    .output(InboxItemSchema)
    .mutation(async ({ ctx, input }) => {
      const item = await promptSession(ctx.db, input.sessionId, input);
      wakeLocal(ctx, input.sessionId);
      return item;
    }),

  editQueued: publicProcedure
    .input(SessionRef.extend({ itemId, text: promptText }))
    .output(InboxItemSchema)
    .mutation(({ ctx, input }) => editQueued(ctx.db, input.sessionId, input.itemId, input.text)),

  removeQueued: publicProcedure
    .input(SessionRef.extend({ itemId }))
    .output(z.object({ removed: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      await removeQueued(ctx.db, input.sessionId, input.itemId);
      return { removed: true as const };
    }),

  steerNow: publicProcedure
    .input(SessionRef.extend({ itemId }))
    .output(z.object({ steered: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      await inTx(ctx.db, (tx) => steerNow(tx, input.sessionId, input.itemId));
      wakeLocal(ctx, input.sessionId);
      return { steered: true as const };
    }),

  stop: publicProcedure
    .input(SessionRef)
    .output(z.object({ aborting: z.boolean() }))
    .mutation(async ({ ctx, input }) => {
      const result = await requestAbort(ctx.db, input.sessionId, "stop");
      void ctx.runtime.checkAbort(input.sessionId);
      return result;
    }),

  fork: publicProcedure
    .input(SessionRef.extend({ throughSeq: int4(1).optional(), title: TitleInput.optional() }))
    .output(SessionViewSchema)
    .mutation(({ ctx, input }) => forkSession(ctx.db, input.sessionId, input)),

  /**
   * Live feed of one session: every event after `lastEventId` (the seq), in order, then new
   * ones as they commit, plus the session state (status, inbox) whenever it changes. A
   * reconnect resumes from the last event id: no gap, no duplicate. Notifications are only
   * hints; rows are read by seq, with a periodic re-read as a safety net.
   */
  live: publicProcedure
    .input(SessionRef.extend({ lastEventId: int4String.nullish() }))
    .subscription(async ({ ctx, input, signal }) => {
      // Checked before the feed starts: an error thrown inside the generator escapes the
      // appErrors mapping and would reach the client as INTERNAL_SERVER_ERROR, not NOT_FOUND.
      await getSession(ctx.db, input.sessionId);
      return liveFeed(ctx, input.sessionId, input.lastEventId ? Number(input.lastEventId) : 0, signal);
    }),
});

async function* liveFeed(ctx: TrpcContext, id: SessionId, lastEventSeq: number, signal: AbortSignal | undefined) {
  let after = lastEventSeq;
  let lastState = "";
  while (!signal?.aborted) {
    const waiter = activityWaiter(ctx.hub, id);
    try {
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
      if (events.length < 500) await waiter.wait(5_000, signal);
    } finally {
      waiter.dispose();
    }
  }
}
