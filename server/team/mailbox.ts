import { z } from "zod";
import { TEAM_MESSAGE_FORMAT } from "../../shared/message-format";
import { Prisma, type TeamMessage as TeamMessageRow } from "../db/generated/client";
import type { Db, DbOrTx } from "../db/client";
import type { SqlRunner } from "../db/sql";
import { AppError } from "../errors";
import { asMessageId, asSessionId, newMessageId, type MessageId, type SessionId } from "../ids";
import { utf8Bytes } from "../../shared/input-guard";
import { DEFAULT_TEAM_LIMITS, LIMITS, type TeamLimits } from "../../shared/limits";
import { notifyColumnSql, notifySql } from "../db/notify";
import { steerAdmission } from "../runtime/inbox";
import type { MemberRef } from "../members/membership";

// The team mailbox (SPEC.md §7, the mailbox decision). A send is two transactions:
//
//  1. queue: the `queued` row commits before any delivery is attempted;
//  2. deliver: the Steer item enters the target's inbox (same message id) and the row is marked
//     `delivered`, in one transaction — so a message is in the target's inbox exactly once or
//     not at all, across processes and crashes.
//
// Both steps take the same per-target advisory lock, so sends to one target are serialised:
// per target, `seq` order is commit order, and delivery (always in `seq` order) admits messages
// in the order their queued rows were committed. Consumption (the message entering the target's
// history at a step boundary) is recorded by `consumedStatement`, the runtime's onClaimed hook.
//
// Target resolution (names, `lead`) and membership checks belong to the caller (membership.ts):
// everything here takes resolved session ids.

export type MailboxLimits = Pick<TeamLimits, "maxMessageBytes" | "maxPending">;

/**
 * Rows per delivery transaction. The default mailbox limit keeps a target's backlog far below
 * it; a bigger backlog (raised limits, a long outage) is delivered in several transactions, in
 * order, so none of them runs into the transaction timeout.
 */
const MAX_DELIVERY_BATCH = 500;

/** How long a delivery waits for a lock before it counts as a temporary failure. */
export const DEFAULT_DELIVERY_LOCK_TIMEOUT_MS = 5_000;

export interface MailboxOptions extends Partial<MailboxLimits> {
  /** lock_timeout of a delivery transaction (the per-target lock and the target's rows). */
  deliveryLockTimeoutMs?: number;
  /** Where temporary delivery failures are reported; defaults to console.warn. */
  log?: (line: string) => void;
}

export interface SendOptions extends MailboxOptions {
  /**
   * Test seam: runs after the queued row committed and before delivery starts (crash tests
   * stop the process here). Whatever it throws is ignored: the message is already durable.
   */
  afterQueued?: (messageId: MessageId) => Promise<void>;
}

export interface SendMessageInput {
  teamId: string;
  sender: MemberRef;
  target: MemberRef;
  content: string;
  /** The send_message call that sends it: stored with the queued row, unique. */
  toolCallKey?: string;
  /** Runs first in the queued row's transaction (the sending driver's lease fence). */
  fence?: (tx: SqlRunner) => Promise<void>;
}

/** accepted: the target's inbox durably holds the message; queued: recovery will deliver it. */
export type SendStatus = "accepted" | "queued";

export interface SendResult {
  messageId: MessageId;
  status: SendStatus;
}

export interface QueuedMessage {
  messageId: MessageId;
  seq: number;
  createdAt: Date;
}

export const TeamMessageStateSchema = z.enum(["queued", "delivered", "consumed"]);
export type TeamMessageState = z.infer<typeof TeamMessageStateSchema>;

export const TeamMessageViewSchema = z.object({
  id: z.string(),
  teamId: z.string(),
  /** Commit order (global, increasing); per target it is also the delivery order. */
  seq: z.number().int(),
  senderSessionId: z.string(),
  senderName: z.string(),
  targetSessionId: z.string(),
  targetName: z.string(),
  content: z.string(),
  state: TeamMessageStateSchema,
  createdAt: z.date(),
  deliveredAt: z.date().nullable(),
  consumedAt: z.date().nullable(),
});
export type TeamMessageView = z.infer<typeof TeamMessageViewSchema>;

// The text a target reads (its format, writer and parser): shared/message-format.ts.

// ------------------------------------------------------------------ locking

/** Advisory lock class of the mailbox (two-key form, so no other lock user can collide). */
const MAILBOX_LOCK_CLASS = 0x6d626f78; // "mbox"

/**
 * The target's lock: queueing and delivery of one target's mail are serialised by it. Taken in
 * the transaction's first round trip (sqlTx), so every statement after it sees what earlier
 * holders committed.
 */
const targetLock = (targetSessionId: string) => ({ classId: MAILBOX_LOCK_CLASS, key: targetSessionId });

function lockTimeoutMs(opts: MailboxOptions): number {
  return Math.max(1, Math.floor(opts.deliveryLockTimeoutMs ?? DEFAULT_DELIVERY_LOCK_TIMEOUT_MS));
}

const defaultLog = (line: string) => console.warn(`[mailbox] ${line}`);
const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

// ------------------------------------------------------------------ step 1: queue

const InsertedRow = z.array(
  z.object({ pending: z.number().int(), seq: z.number().int().nullable(), createdAt: z.date().nullable() }),
);

/** Refusals that need no database: they persist nothing. */
function validateSend(input: SendMessageInput, limits: MailboxLimits): void {
  if (input.sender.sessionId === input.target.sessionId) {
    throw new AppError("TEAM_SELF_MESSAGE", "An agent cannot send a message to itself", { target: input.target.name });
  }
  const bytes = utf8Bytes(input.content);
  if (bytes > limits.maxMessageBytes) {
    throw new AppError(
      "TEAM_MESSAGE_TOO_LARGE",
      `The message is ${bytes} bytes; the limit is ${limits.maxMessageBytes} bytes`,
      { bytes, maxMessageBytes: limits.maxMessageBytes },
    );
  }
}

/**
 * Step 1 alone: validates and commits the `queued` row (its own transaction), without
 * delivering. Throws TEAM_SELF_MESSAGE, TEAM_MESSAGE_TOO_LARGE or TEAM_MAILBOX_FULL, and then
 * nothing was persisted. `sendMessage` is this plus a delivery attempt.
 */
export async function queueMessage(db: Db, input: SendMessageInput, opts: MailboxOptions = {}): Promise<QueuedMessage> {
  const limits: MailboxLimits = {
    maxMessageBytes: opts.maxMessageBytes ?? DEFAULT_TEAM_LIMITS.maxMessageBytes,
    maxPending: opts.maxPending ?? DEFAULT_TEAM_LIMITS.maxPending,
  };
  validateSend(input, limits);
  const messageId = newMessageId();
  const { sender, target } = input;
  return db.sqlTx(async (tx) => {
    // After the target's lock, as every writer takes its locks (the effect's, then the sender's
    // session row), so two members messaging each other cannot deadlock.
    await input.fence?.(tx);
    // Under the lock (a statement of its own: a snapshot taken after the lock was granted sees
    // every earlier send), so concurrent senders cannot both squeeze into the last free place.
    // Counting and inserting in one statement saves a round trip on the hot path, and it goes
    // with the COMMIT: a full mailbox inserts nothing, so committing is harmless. It notifies
    // nothing: the delivery right after it notifies the room (`mail`), and a row left queued is
    // announced by sendMessage or delivered by recovery, which notifies. A notifying commit
    // holds Postgres's notification lock until its flush, so it shares a flush with no other:
    // one per send instead of two delivers a fifth more messages a second.
    const [inserted] = await tx.commitWith([
      Prisma.sql`WITH pending AS (
          SELECT count(*)::int AS n FROM team_messages
          WHERE target_session_id = ${target.sessionId} AND consumed_at IS NULL
        ), inserted AS (
          INSERT INTO team_messages
            (id, team_id, sender_session_id, sender_name, target_session_id, target_name, content, state, tool_call_key)
          SELECT ${messageId}, ${input.teamId}, ${sender.sessionId}, ${sender.name}, ${target.sessionId},
                 ${target.name}, ${input.content}, 'queued', ${input.toolCallKey ?? null}::text
          FROM pending WHERE pending.n < ${limits.maxPending}
          RETURNING seq, created_at
        )
        SELECT pending.n AS pending, inserted.seq, inserted.created_at AS "createdAt"
        FROM pending LEFT JOIN inserted ON true`,
    ]);
    const row = InsertedRow.parse(inserted!.rows)[0]!;
    if (row.seq === null || row.createdAt === null) {
      throw new AppError(
        "TEAM_MAILBOX_FULL",
        `${target.name} has ${row.pending} messages it has not read yet (limit ${limits.maxPending}); try again after it has caught up`,
        { target: target.name, pending: row.pending, maxPending: limits.maxPending },
      );
    }
    return { messageId, seq: row.seq, createdAt: row.createdAt };
  }, { advisoryLock: targetLock(target.sessionId) });
}

// ------------------------------------------------------------------ step 2: deliver

const Delivered = z.array(z.object({ n: z.number().int() }));
const MessageStateRows = z.array(z.object({ state: z.string() }));

/**
 * One delivery transaction for one target: every queued row (up to MAX_DELIVERY_BATCH), in seq
 * order, into the inbox as Steer items with the messages' own ids, then marked delivered. A row
 * whose id already is in the target's inbox or history (a crash window of an earlier delivery
 * path, or a hand-made redelivery) is only marked. Returns how many rows it marked.
 *
 * One round trip: BEGIN, the target's lock (as queueMessage takes it, so deliveries of one
 * target are serialised), one statement and COMMIT. The statement starts after the lock was
 * granted, so its snapshot sees every row earlier holders queued or marked; it reads the queued
 * rows, admits them through the Steer adapter (`steerAdmission`, runtime/inbox.ts, which writes
 * the target's session row only to un-park it), marks them and notifies, all from SQL, so the
 * lock is never held across a round trip to this process. (Row locks instead of the advisory
 * lock would deadlock: a deliverer with an older snapshot keeps a lock on a row another one just
 * delivered, which the target's claim transaction then waits for while holding the session row
 * the deliverer needs.)
 */
async function deliverBatch(db: Db, targetSessionId: SessionId, opts: MailboxOptions): Promise<number> {
  // lock_timeout bounds this transaction's waits: the target's lock and its session row.
  const locked = { lockTimeoutMs: lockTimeoutMs(opts), advisoryLock: targetLock(targetSessionId) };
  const admission = steerAdmission(
    targetSessionId,
    Prisma.sql`SELECT q.id, format(${TEAM_MESSAGE_FORMAT}::text, q.id, q.sender_name, q.content) AS text,
        jsonb_build_object('kind', 'team', 'teamId', q.team_id, 'messageId', q.id,
          'senderSessionId', q.sender_session_id, 'senderName', q.sender_name) AS source,
        q.seq AS ord
      FROM queued q WHERE NOT q.in_inbox AND NOT q.in_history`,
  );
  return db.sqlTx(async (tx) => {
    // statement_timestamp(), not now(): the stamps order queued → delivered → consumed even
    // when the transactions overlap; one stamp for the whole batch keeps seq order. Nothing in
    // it decides whether to commit, so the COMMIT goes with it. The teams' notifications (one:
    // a target is in one team) are its rows; none when nothing was queued.
    const [result] = await tx.commitWith([
      Prisma.sql`WITH queued AS MATERIALIZED (
          SELECT m.id, m.seq, m.team_id, m.sender_session_id, m.sender_name, m.content,
            EXISTS (SELECT 1 FROM inbox_items i WHERE i.session_id = ${targetSessionId} AND i.id = m.id) AS in_inbox,
            EXISTS (SELECT 1 FROM session_events e WHERE e.session_id = ${targetSessionId} AND e.message_id = m.id) AS in_history
          FROM team_messages m WHERE m.target_session_id = ${targetSessionId} AND m.state = 'queued'
          ORDER BY m.seq LIMIT ${MAX_DELIVERY_BATCH}
        ), ${admission.ctes}, marked AS (
          UPDATE team_messages m SET state = 'delivered', delivered_at = statement_timestamp(),
            consumed_at = CASE WHEN q.in_history THEN coalesce(m.consumed_at, statement_timestamp()) ELSE m.consumed_at END
          FROM queued q WHERE m.id = q.id AND m.state = 'queued'
          RETURNING 1
        )
        SELECT (SELECT count(*)::int FROM queued) AS n, ${admission.notify} AS inbox, ${notifyColumnSql(Prisma.sql`t.team_id`, "mail")} AS team
        FROM (SELECT DISTINCT team_id FROM queued) AS t`,
    ]);
    return Delivered.parse(result!.rows)[0]?.n ?? 0;
  }, locked);
}

/**
 * Delivers every queued row for one target, in order, in one transaction under the target's
 * lock (several for a backlog over MAX_DELIVERY_BATCH rows). Returns how many rows it marked
 * delivered. Throws when a transaction fails (its rows stay queued); `sendMessage` and
 * `recoverMailbox` treat that as a temporary failure.
 */
export async function deliverPending(db: Db, targetSessionId: SessionId, opts: MailboxOptions = {}): Promise<number> {
  let all = 0;
  for (;;) {
    const n = await deliverBatch(db, targetSessionId, opts);
    all += n;
    if (n < MAX_DELIVERY_BATCH) return all;
  }
}

/**
 * send_message: commits the queued row, then tries to deliver. Rejections (self-message, too
 * large, mailbox full) throw before anything is persisted. After the queued row committed this
 * never throws: `accepted` when the message is in the target's inbox (by this call's delivery
 * or a concurrent one), `queued` when delivery failed for now and recovery will deliver it.
 */
export async function sendMessage(db: Db, input: SendMessageInput, opts: SendOptions = {}): Promise<SendResult> {
  const log = opts.log ?? defaultLog;
  const { messageId } = await queueMessage(db, input, opts);
  try {
    await opts.afterQueued?.(messageId);
    // Its transactions took the target's lock after the queued row committed, so they found the
    // row either still queued (and delivered it) or delivered by an earlier holder of the lock
    // (another sender's delivery, or recovery's). Either way the target's inbox holds it now.
    await deliverPending(db, input.target.sessionId, opts);
    return { messageId, status: "accepted" };
  } catch (e) {
    log(`delivery of ${messageId} to ${input.target.name} (${input.target.sessionId}) failed, left queued: ${errorText(e)}`);
  }
  // A concurrent delivery may still have taken this row along. The room hears of the row
  // either way (the queued row notified nothing).
  try {
    const rows = await db.sql.$queryRaw`SELECT state::text, ${notifySql(input.teamId, "mail")} FROM team_messages WHERE id = ${messageId}`;
    if (MessageStateRows.parse(rows)[0]?.state === "delivered") return { messageId, status: "accepted" };
  } catch (e) {
    log(`could not read the state of ${messageId}: ${errorText(e)}`);
  }
  return { messageId, status: "queued" };
}

/**
 * What became of the message a send_message call queued, if its queued row committed: its id
 * and status, after one more delivery attempt (so `accepted` whenever it can be).
 */
export async function sendResultOfToolCall(db: Db, toolCallKey: string, opts: MailboxOptions = {}): Promise<SendResult | null> {
  const find = () => db.teamMessage.findUnique({ where: { toolCallKey }, select: { id: true, state: true, targetSessionId: true } });
  const row = await find();
  if (!row) return null;
  if (row.state === "queued") await deliverPending(db, asSessionId(row.targetSessionId), opts).catch(() => 0);
  const now = (await find()) ?? row;
  return { messageId: asMessageId(row.id), status: now.state === "delivered" ? "accepted" : "queued" };
}

// ------------------------------------------------------------------ recovery

const TargetRows = z.array(z.object({ id: z.string() }));

/**
 * Delivers every queued-but-undelivered row, target by target (oldest pending mail first),
 * each target's rows in seq order. A target whose delivery fails is logged and retried by the
 * next run. Returns how many rows were delivered. Run it at start-up and periodically.
 */
export async function recoverMailbox(db: Db, opts: MailboxOptions = {}): Promise<number> {
  const log = opts.log ?? defaultLog;
  const targets = TargetRows.parse(
    await db.$queryRaw`SELECT target_session_id AS id FROM team_messages WHERE state = 'queued'
      GROUP BY target_session_id ORDER BY min(seq)`,
  );
  let delivered = 0;
  for (const t of targets) {
    try {
      delivered += await deliverPending(db, asSessionId(t.id), opts);
    } catch (e) {
      log(`recovery could not deliver the mail of ${t.id} yet: ${errorText(e)}`);
    }
  }
  return delivered;
}

// ------------------------------------------------------------------ consumption

/**
 * The runtime's onClaimed hook: a statement run in the claim's transaction, after the claim.
 * Team messages delivered to the session that are no longer in its inbox (claimed: delivery
 * puts a row in the inbox and marks it delivered in one transaction, and only a claim takes it
 * out) are consumed, and their team is told. Through the partial index of the target's
 * unconsumed rows, so it reads only the few the mailbox limit allows.
 */
export function consumedStatement(sessionId: SessionId): Prisma.Sql {
  return Prisma.sql`WITH consumed AS (
      UPDATE team_messages m SET consumed_at = statement_timestamp()
      WHERE m.target_session_id = ${sessionId} AND m.consumed_at IS NULL AND m.state = 'delivered'
        AND NOT EXISTS (SELECT 1 FROM inbox_items i WHERE i.session_id = ${sessionId} AND i.id = m.id)
      RETURNING m.team_id
    )
    SELECT ${notifyColumnSql(Prisma.sql`t.team_id`, "mail")} FROM (SELECT DISTINCT team_id FROM consumed) AS t`;
}

// ------------------------------------------------------------------ reading

/** What a person sees of a row: consumed once it entered the target's history, else its stored state. */
export function messageState(row: { state: string; consumedAt: Date | null }): TeamMessageState {
  return row.consumedAt ? "consumed" : row.state === "delivered" ? "delivered" : "queued";
}

/** The team's messages in seq order, after `afterSeq` (a page of at most `limit`). */
export async function listMessages(
  db: DbOrTx,
  teamId: string,
  opts: { afterSeq?: number; limit?: number } = {},
): Promise<TeamMessageView[]> {
  const limit = Math.min(LIMITS.messageListMax, Math.max(1, Math.floor(opts.limit ?? LIMITS.messageListDefault)));
  const rows = await db.teamMessage.findMany({
    where: { teamId, ...(opts.afterSeq === undefined ? {} : { seq: { gt: opts.afterSeq } }) },
    orderBy: { seq: "asc" },
    take: limit,
  });
  return rows.map(messageView);
}

/** The team's newest `limit` messages (what the room shows), in seq order. */
export async function recentMessages(db: DbOrTx, teamId: string, limit: number): Promise<TeamMessageView[]> {
  const rows = await db.teamMessage.findMany({ where: { teamId }, orderBy: { seq: "desc" }, take: limit });
  return rows.reverse().map(messageView);
}

function messageView(r: TeamMessageRow): TeamMessageView {
  return TeamMessageViewSchema.parse({
    id: r.id,
    teamId: r.teamId,
    seq: r.seq,
    senderSessionId: r.senderSessionId,
    senderName: r.senderName,
    targetSessionId: r.targetSessionId,
    targetName: r.targetName,
    content: r.content,
    state: messageState(r),
    createdAt: r.createdAt,
    deliveredAt: r.deliveredAt,
    consumedAt: r.consumedAt,
  });
}
