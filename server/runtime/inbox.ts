import { z } from "zod";
import { asJson, inTx, type DbOrTx, type Tx } from "../db/client";
import { Prisma } from "../db/generated/client";
import type { SqlRunner } from "../db/sql";
import { PersonRefSchema, type PersonRef } from "../person-ref";
import { AppError } from "../errors";
import { newMessageId, type MessageId, type SessionId } from "../ids";
import { notifyActivity, notifySql } from "../db/notify";
import { MessageSourceSchema, type MessageSource } from "./events";
import type { Lease } from "./session-log";

// The durable inbox of pending input, with its two adapters:
//  - Queue (human prompts): each item becomes its own turn, FIFO.
//  - Steer (team messages, "steer now"): taken at the next step boundary of a running turn.

export type InboxMode = "queue" | "steer";

export const InboxItemSchema = z.object({
  id: z.string(),
  mode: z.enum(["queue", "steer"]),
  text: z.string(),
  source: MessageSourceSchema,
  /** The person who last edited a queued prompt. */
  editedBy: PersonRefSchema.nullable(),
  position: z.number().int(),
  createdAt: z.date(),
});
export type InboxItemView = z.infer<typeof InboxItemSchema>;

export const INBOX_ITEM_SELECT = { id: true, mode: true, text: true, source: true, editedBy: true, position: true, createdAt: true } as const;
/** The same columns in raw SQL, named as InboxItemSchema reads them. */
export const INBOX_ITEM_COLUMNS = Prisma.sql`id, mode, text, source, edited_by AS "editedBy", position, created_at AS "createdAt"`;

export interface EnqueueInput {
  mode: InboxMode;
  text: string;
  source: MessageSource;
  /** Callers that need redelivery to be harmless (team mail) pass their own stable id. */
  id?: MessageId;
}

/**
 * Adds input and un-parks the agent (any new input is a waking input), inside the caller's
 * transaction: one statement, and the notification.
 */
const InboxItemRows = z.array(InboxItemSchema);

export async function enqueue(db: SqlRunner, sessionId: SessionId, input: EnqueueInput): Promise<InboxItemView> {
  const id = input.id ?? newMessageId();
  const rows = await db.$queryRaw`WITH s AS (
      UPDATE sessions SET parked = false, updated_at = now() WHERE id = ${sessionId} RETURNING id
    )
    INSERT INTO inbox_items (session_id, id, mode, text, source)
    SELECT s.id, ${id}, ${input.mode}, ${input.text}, ${JSON.stringify(input.source)}::jsonb FROM s
    RETURNING ${INBOX_ITEM_COLUMNS}`;
  const row = InboxItemRows.parse(rows)[0];
  if (!row) throw new AppError("SESSION_NOT_FOUND", `Session ${sessionId} not found`);
  await notifyActivity(db, sessionId, "inbox");
  return row;
}

/**
 * The Steer adapter for a batch (team mail delivery), as two CTEs of the caller's statement:
 * `steers_admitted` inserts the rows of `items` (a query with columns id, text, source as jsonb
 * and ord, which earlier CTEs of the statement may feed) in `ord` order, and `steers_unparked`
 * un-parks the target when anything was admitted. Only a parked target's session row is
 * written: a running target's own transactions hold that row nearly all the time, and the
 * items' foreign key needs only a key-share lock, so a delivery does not wait behind them.
 * `notify` is an expression for the caller's select list: the inbox notification, sent only
 * when something was admitted.
 */
export function steerAdmission(sessionId: SessionId, items: Prisma.Sql): { ctes: Prisma.Sql; notify: Prisma.Sql } {
  return {
    ctes: Prisma.sql`steers_admitted AS (
      INSERT INTO inbox_items (session_id, id, mode, text, source)
      SELECT ${sessionId}, i.id, 'steer', i.text, i.source FROM (${items}) AS i ORDER BY i.ord
      RETURNING 1
    ), steers_unparked AS (
      UPDATE sessions SET parked = false, updated_at = now()
      WHERE id = ${sessionId} AND parked AND EXISTS (SELECT 1 FROM steers_admitted)
      RETURNING 1
    )`,
    // CASE evaluates only the branch it takes, so nothing is sent when nothing was admitted.
    notify: Prisma.sql`CASE WHEN EXISTS (SELECT 1 FROM steers_admitted) THEN ${notifySql(sessionId, "inbox")} END`,
  };
}

function notFound(itemId: string): AppError {
  return new AppError("QUEUE_ITEM_NOT_FOUND", `Queued prompt ${itemId} is no longer queued`, { itemId });
}

/** Edits the text of a queued prompt; it keeps its id and position. */
export async function editQueued(db: DbOrTx, sessionId: SessionId, itemId: string, text: string, by?: PersonRef): Promise<InboxItemView> {
  return inTx(db, async (tx) => {
    const editedBy = by ? asJson(by) : undefined;
    const { count } = await tx.inboxItem.updateMany({ where: { sessionId, id: itemId, mode: "queue" }, data: { text, editedBy } });
    if (count === 0) throw notFound(itemId);
    await notifyActivity(tx, sessionId, "inbox");
    return InboxItemSchema.parse(await tx.inboxItem.findUniqueOrThrow({ where: { sessionId_id: { sessionId, id: itemId } }, select: INBOX_ITEM_SELECT }));
  });
}

/** Removes a queued prompt; its text, for whoever records the removal. */
export async function removeQueued(db: DbOrTx, sessionId: SessionId, itemId: string): Promise<{ text: string }> {
  return inTx(db, async (tx) => {
    const removed = await tx.inboxItem.findFirst({ where: { sessionId, id: itemId, mode: "queue" }, select: { text: true } });
    const { count } = await tx.inboxItem.deleteMany({ where: { sessionId, id: itemId, mode: "queue" } });
    if (count === 0 || !removed) throw notFound(itemId);
    await notifyActivity(tx, sessionId, "inbox");
    return removed;
  });
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

export const ClaimedRow = z.object({
  id: z.string(),
  mode: z.enum(["queue", "steer"]),
  text: z.string(),
  source: MessageSourceSchema,
  position: z.number().int(),
});
export type ClaimedItem = z.infer<typeof ClaimedRow>;

/**
 * Step-boundary claim, as CTEs of the statement that appends the claimed messages
 * (session-log.ts `appendStatement`'s `claim`): all pending steer items, plus one queued item
 * at the first step of a turn. They define `claimed_items(id, mode, text, source, position)`.
 * Items whose id is already in history (a redelivery) are deleted but not given, so nothing
 * enters twice. `unlessAbortRequested`: claims nothing while a stop or interrupt request is
 * stored. `lease`: claims nothing unless the lease is held (a statement after the lease's lock
 * in the same transaction: it sees the lock's outcome, so a lost lease loses no input).
 */
export function claimCtes(sessionId: SessionId, at: { firstStep: boolean; unlessAbortRequested?: boolean }, lease?: Lease): Prisma.Sql {
  const queueLimit = at.firstStep ? 1 : 0;
  return Prisma.sql`claimed AS (
      DELETE FROM inbox_items WHERE session_id = ${sessionId} AND id IN (
        SELECT id FROM inbox_items WHERE session_id = ${sessionId} AND mode = 'steer'
        UNION ALL
        (SELECT id FROM inbox_items WHERE session_id = ${sessionId} AND mode = 'queue'
         ORDER BY position LIMIT ${queueLimit}))
      AND (NOT ${at.unlessAbortRequested ?? false}
        OR NOT EXISTS (SELECT 1 FROM sessions WHERE id = ${sessionId} AND abort_request IS NOT NULL))
      ${lease ? Prisma.sql`AND EXISTS (SELECT 1 FROM sessions WHERE id = ${sessionId} AND lease_owner = ${lease.owner} AND lease_token = ${lease.token})` : Prisma.empty}
      RETURNING id, mode, text, source, position
    ), claimed_items AS (
      SELECT c.id, c.mode, c.text, c.source, c.position FROM claimed c
      WHERE NOT EXISTS (SELECT 1 FROM session_events e WHERE e.session_id = ${sessionId} AND e.message_id = c.id)
    )`;
}
