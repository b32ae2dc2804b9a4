import { z } from "zod";
import { asJson, type DbOrTx, type Tx } from "../db/client";
import { AppError } from "../errors";
import type { SessionId } from "../ids";
import { notifyActivity } from "../live/activity";
import { EventPayloadSchema, type EventPayload, type SessionEvent } from "./events";

/** A held lease. Every append under a lease is fenced by its token. */
export interface Lease {
  owner: string;
  token: number;
}

const SeqRow = z.object({ last_seq: z.number().int() });

/**
 * Appends events with gap-free seq numbers. The UPDATE on the session row both allocates the
 * seq range (the row lock serialises concurrent appenders) and fences: with a lease, it only
 * succeeds while the lease token is still ours, so a process that lost its lease writes nothing.
 */
export async function appendEvents(
  tx: Tx,
  sessionId: SessionId,
  payloads: EventPayload[],
  lease: Lease | null,
): Promise<SessionEvent[]> {
  if (payloads.length === 0) return [];
  const n = payloads.length;
  const rows = lease
    ? await tx.$queryRaw`UPDATE sessions SET last_seq = last_seq + ${n}, updated_at = now()
        WHERE id = ${sessionId} AND lease_owner = ${lease.owner} AND lease_token = ${lease.token}
        RETURNING last_seq`
    : await tx.$queryRaw`UPDATE sessions SET last_seq = last_seq + ${n}, updated_at = now()
        WHERE id = ${sessionId} RETURNING last_seq`;
  const row = z.array(SeqRow).parse(rows)[0];
  if (!row) {
    if (lease) throw new AppError("LEASE_LOST", `Lease on ${sessionId} is no longer held`);
    throw new AppError("SESSION_NOT_FOUND", `Session ${sessionId} not found`);
  }
  const first = row.last_seq - n + 1;
  const createdAt = new Date();
  const events = payloads.map((payload, i) => ({ seq: first + i, createdAt, payload }));
  await tx.sessionEvent.createMany({
    data: events.map((e) => ({
      sessionId,
      seq: e.seq,
      kind: e.payload.kind,
      turnId: "turnId" in e.payload ? e.payload.turnId : null,
      messageId: messageIdOf(e.payload),
      payload: asJson(e.payload),
      createdAt,
    })),
  });
  await notifyActivity(tx, sessionId, "event", row.last_seq);
  return events;
}

/**
 * Inside a transaction: holds a share lock on the session row while the lease is still ours
 * (a process taking the lease over waits for this transaction), or throws LEASE_LOST.
 */
export async function assertLeaseHeld(tx: Tx, sessionId: SessionId, lease: Lease): Promise<void> {
  const rows = z.array(z.object({ id: z.string() })).parse(
    await tx.$queryRaw`SELECT id FROM sessions
      WHERE id = ${sessionId} AND lease_owner = ${lease.owner} AND lease_token = ${lease.token} FOR SHARE`,
  );
  if (rows.length === 0) throw new AppError("LEASE_LOST", `Lease on ${sessionId} is no longer held`);
}

function messageIdOf(p: EventPayload): string | null {
  return p.kind === "user_message" || p.kind === "assistant_message" ? p.messageId : null;
}

const EventRow = z.object({ seq: z.number().int(), createdAt: z.date(), payload: EventPayloadSchema });

function parseRows(rows: unknown[]): SessionEvent[] {
  return rows.map((r) => EventRow.parse(r));
}

/** Rows per query when a whole history is read. */
const READ_PAGE = 5_000;

/**
 * Events with seq > afterSeq, ascending: at most `limit` of them (a page), or without a limit
 * every one — read page by page, never cut short (histories drive resume, forks, compaction).
 */
export async function readEventsAfter(
  db: DbOrTx,
  sessionId: SessionId,
  afterSeq = 0,
  limit?: number,
): Promise<SessionEvent[]> {
  const page = async (after: number, take: number) =>
    parseRows(
      await db.sessionEvent.findMany({
        where: { sessionId, seq: { gt: after } },
        orderBy: { seq: "asc" },
        take,
        select: { seq: true, createdAt: true, payload: true },
      }),
    );
  if (limit !== undefined) return page(afterSeq, limit);
  const all: SessionEvent[] = [];
  for (let after = afterSeq; ; ) {
    const rows = await page(after, READ_PAGE);
    all.push(...rows);
    if (rows.length < READ_PAGE) return all;
    after = rows.at(-1)!.seq;
  }
}

/** The newest `limit` events with seq < beforeSeq, returned ascending (a transcript page). */
export async function readEventsBefore(
  db: DbOrTx,
  sessionId: SessionId,
  beforeSeq: number | undefined,
  limit: number,
): Promise<SessionEvent[]> {
  const rows = await db.sessionEvent.findMany({
    where: { sessionId, ...(beforeSeq === undefined ? {} : { seq: { lt: beforeSeq } }) },
    orderBy: { seq: "desc" },
    take: limit,
    select: { seq: true, createdAt: true, payload: true },
  });
  return parseRows(rows).reverse();
}

/** Message ids already in the session's history, among `ids`. */
export async function existingMessageIds(db: DbOrTx, sessionId: SessionId, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.sessionEvent.findMany({
    where: { sessionId, messageId: { in: ids } },
    select: { messageId: true },
  });
  return new Set(rows.flatMap((r) => (r.messageId ? [r.messageId] : [])));
}
