import { z } from "zod";
import { asJson, type DbOrTx, type Tx } from "../db/client";
import { AppError } from "../errors";
import { newMessageId, type MessageId, type SessionId } from "../ids";
import { notifyActivity } from "../live/activity";
import { MessageSourceSchema, type MessageSource } from "./events";
import { existingMessageIds } from "./session-log";

// The durable inbox of pending input, with its two adapters:
//  - Queue (human prompts): each item becomes its own turn, FIFO.
//  - Steer (team messages, "steer now"): taken at the next step boundary of a running turn.

export type InboxMode = "queue" | "steer";

export const InboxItemSchema = z.object({
  id: z.string(),
  mode: z.enum(["queue", "steer"]),
  text: z.string(),
  source: MessageSourceSchema,
  position: z.number().int(),
  createdAt: z.date(),
});
export type InboxItemView = z.infer<typeof InboxItemSchema>;

const select = { id: true, mode: true, text: true, source: true, position: true, createdAt: true } as const;

export interface EnqueueInput {
  mode: InboxMode;
  text: string;
  source: MessageSource;
  /** Callers that need redelivery to be harmless (team mail) pass their own stable id. */
  id?: MessageId;
}

/** Adds input and un-parks the agent (any new input is a waking input). */
export async function enqueue(db: Tx, sessionId: SessionId, input: EnqueueInput): Promise<InboxItemView> {
  const id = input.id ?? newMessageId();
  const updated = await db.session.updateMany({
    where: { id: sessionId },
    data: { parked: false, updatedAt: new Date() },
  });
  if (updated.count === 0) throw new AppError("SESSION_NOT_FOUND", `Session ${sessionId} not found`);
  const row = await db.inboxItem.create({
    data: { sessionId, id, mode: input.mode, text: input.text, source: asJson(input.source) },
    select,
  });
  await notifyActivity(db, sessionId, "inbox");
  return InboxItemSchema.parse(row);
}

export async function listInbox(db: DbOrTx, sessionId: SessionId): Promise<InboxItemView[]> {
  const rows = await db.inboxItem.findMany({ where: { sessionId }, orderBy: { position: "asc" }, select });
  return rows.map((r) => InboxItemSchema.parse(r));
}

function notFound(itemId: string): AppError {
  return new AppError("QUEUE_ITEM_NOT_FOUND", `Queued prompt ${itemId} is no longer queued`, { itemId });
}

/** Edits the text of a queued prompt; it keeps its id and position. */
export async function editQueued(db: DbOrTx, sessionId: SessionId, itemId: string, text: string): Promise<InboxItemView> {
  const { count } = await db.inboxItem.updateMany({ where: { sessionId, id: itemId, mode: "queue" }, data: { text } });
  if (count === 0) throw notFound(itemId);
  await notifyActivity(db, sessionId, "inbox");
  return InboxItemSchema.parse(await db.inboxItem.findUniqueOrThrow({ where: { sessionId_id: { sessionId, id: itemId } }, select }));
}

export async function removeQueued(db: DbOrTx, sessionId: SessionId, itemId: string): Promise<void> {
  const { count } = await db.inboxItem.deleteMany({ where: { sessionId, id: itemId, mode: "queue" } });
  if (count === 0) throw notFound(itemId);
  await notifyActivity(db, sessionId, "inbox");
}

/**
 * "Steer now", strict: only while a turn is active and the item is still queued. The share
 * lock on the session row orders this against the driver's end-of-turn check, so the item is
 * either seen by the running turn or refused — never stranded as a steer item between turns.
 */
export async function steerNow(tx: Tx, sessionId: SessionId, itemId: string): Promise<void> {
  const n = await tx.$executeRaw`UPDATE inbox_items SET mode = 'steer'
    WHERE session_id = ${sessionId} AND id = ${itemId} AND mode = 'queue'
      AND EXISTS (SELECT 1 FROM sessions WHERE id = ${sessionId} AND active_turn_id IS NOT NULL FOR SHARE)`;
  if (n === 1) {
    await notifyActivity(tx, sessionId, "inbox");
    return;
  }
  const item = await tx.inboxItem.findFirst({ where: { sessionId, id: itemId, mode: "queue" }, select: { id: true } });
  if (!item) throw notFound(itemId);
  throw new AppError("STEER_UNAVAILABLE", "Steer now needs a running turn; the prompt stays queued", { itemId });
}

const ClaimedRow = z.object({
  id: z.string(),
  mode: z.enum(["queue", "steer"]),
  text: z.string(),
  source: MessageSourceSchema,
  position: z.number().int(),
});
export type ClaimedItem = z.infer<typeof ClaimedRow>;

/**
 * Step-boundary claim, inside the transaction that appends the claimed messages: all pending
 * steer items, plus one queued item at the first step of a turn. Items whose id is already in
 * history (a redelivery) are dropped here, so nothing enters twice.
 */
export async function claimInbox(tx: Tx, sessionId: SessionId, at: { firstStep: boolean }): Promise<ClaimedItem[]> {
  const queueLimit = at.firstStep ? 1 : 0;
  const rows = await tx.$queryRaw`DELETE FROM inbox_items WHERE session_id = ${sessionId} AND id IN (
      SELECT id FROM inbox_items WHERE session_id = ${sessionId} AND mode = 'steer'
      UNION ALL
      (SELECT id FROM inbox_items WHERE session_id = ${sessionId} AND mode = 'queue'
       ORDER BY position LIMIT ${queueLimit}))
    RETURNING id, mode, text, source, position`;
  const items = z.array(ClaimedRow).parse(rows).sort((a, b) => a.position - b.position);
  const seen = await existingMessageIds(tx, sessionId, items.map((i) => i.id));
  return items.filter((i) => !seen.has(i.id));
}
