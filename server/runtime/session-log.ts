import { z } from "zod";
import type { SqlRunner } from "../db/sql";
import { AppError } from "../errors";
import type { SessionId } from "../ids";
import { Prisma } from "../db/generated/client";
import { EventPayloadSchema, type EventPayload, type SessionEvent } from "./events";

/** A held lease. Every append under a lease is fenced by its token. */
export interface Lease {
  owner: string;
  token: number;
}

const StoredRows = z.array(z.object({ seq: z.number().int(), payload: EventPayloadSchema }));

/** A step's usage and cost, added to the session's spend counters (what budgets and the roster read). */
export interface SpendDelta {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  costNanos: number;
  /** A step's reply: its usage replaces the step's reservation (runtime/step-reserve.ts). */
  settlesReservation?: boolean;
}
const NO_SPEND: SpendDelta = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, costNanos: 0 };

/** Whether a step's usage moves the session's spend (then the room's figures move: `spend`). */
export function spends(spend: SpendDelta | undefined): boolean {
  return spend !== undefined && (spend.inputTokens !== 0 || spend.outputTokens !== 0 || spend.costNanos !== 0);
}

/**
 * What else an append changes on the session row it locks anyway (the turn's start or end),
 * in the same UPDATE: `set` more columns, only `where` this also holds.
 */
export interface SessionRowChange {
  set?: Prisma.Sql;
  where?: Prisma.Sql;
}

/** A statement and how its rows are read: run alone, in a batch, or with a COMMIT. */
export interface Statement<T> {
  sql: Prisma.Sql;
  read(rows: unknown): T;
}

/**
 * Input claimed by the append's own statement (inbox.ts `claimCtes`, which define
 * `claimed_items(id, text, source, position)`): each item is appended as a user message, in
 * position order, after the first `at` payloads. `required`: nothing is appended unless
 * something was claimed (a turn starts only with input).
 */
export interface ClaimInAppend {
  ctes: Prisma.Sql;
  at: number;
  required: boolean;
}

/**
 * The last payloads of an append, from index `from` on, appended only when `when` holds (in
 * the append's own snapshot); the others regardless.
 */
export interface AppendOnlyWhen {
  from: number;
  when: Prisma.Sql;
}

/**
 * Appends events with gap-free seq numbers, in one statement (one round trip; on its own, one
 * commit; inside a transaction, part of it). The UPDATE on the session row both allocates the
 * seq range (the row lock serialises concurrent appenders) and fences: with a lease, it only
 * matches while the lease token is still ours, so a process that lost its lease writes nothing.
 * The insert hangs on that UPDATE's row; `spend` (a step's usage and cost) is added to the
 * session's counters by the same UPDATE. It notifies nothing: the writer announces what
 * committed (the runtime: ActivityHub.announce, outside the transaction). `claim` adds
 * the input the same statement claims (its messages are built here, from the claimed rows);
 * `onlyWhen` (not with `claim`) makes the last payloads conditional. Read, it gives the events
 * as stored, or none when the row did not match (fence, `change.where`, a required claim that
 * found nothing).
 */
export function appendStatement(
  sessionId: SessionId,
  payloads: EventPayload[],
  lease: Lease | null,
  spend?: SpendDelta,
  change?: SessionRowChange,
  claim?: ClaimInAppend,
  onlyWhen?: AppendOnlyWhen,
): Statement<SessionEvent[]> {
  if (claim && onlyWhen) throw new Error("appendStatement: claim and onlyWhen together");
  const add = spend ?? NO_SPEND;
  const createdAt = new Date();
  const rowsOf = (ps: EventPayload[]) =>
    JSON.stringify(ps.map((p) => ({ kind: p.kind, turnId: "turnId" in p ? p.turnId : null, messageId: messageIdOf(p), payload: p })));
  const fenced = lease !== null;
  // r(v, i): the event rows in order. With a claim, the claimed items become user messages
  // (the payload the driver's own claimed input would have) between the first `at` payloads and
  // the rest, and are counted in SQL. Without one (the hot append: every flush, reply and tool
  // result) the count is a parameter and the rows are read straight from the array.
  const rows = claim
    ? Prisma.sql`WITH ${claim.ctes}, claimed_rows AS (
        SELECT jsonb_build_object('kind', 'user_message', 'turnId', NULL, 'messageId', c.id,
            'payload', jsonb_build_object('kind', 'user_message', 'messageId', c.id, 'text', c.text, 'source', c.source)) AS v,
          row_number() OVER (ORDER BY c.position) AS i
        FROM claimed_items c
      ), r AS (
        SELECT b.v, b.i FROM jsonb_array_elements(${rowsOf(payloads.slice(0, claim.at))}::jsonb) WITH ORDINALITY AS b(v, i)
        UNION ALL SELECT c.v, ${claim.at} + c.i FROM claimed_rows c
        UNION ALL SELECT a.v, ${claim.at} + (SELECT count(*) FROM claimed_rows) + a.i
          FROM jsonb_array_elements(${rowsOf(payloads.slice(claim.at))}::jsonb) WITH ORDINALITY AS a(v, i)
      ),`
    : Prisma.sql`WITH`;
  const n = claim
    ? Prisma.sql`(SELECT count(*)::int FROM r)`
    : onlyWhen
      ? Prisma.sql`(${onlyWhen.from} + CASE WHEN ${onlyWhen.when} THEN ${payloads.length - onlyWhen.from} ELSE 0 END)`
      : Prisma.sql`${payloads.length}`;
  const from = claim ? Prisma.sql`r` : Prisma.sql`jsonb_array_elements(${rowsOf(payloads)}::jsonb) WITH ORDINALITY AS r(v, i)`;
  const only = onlyWhen ? Prisma.sql`WHERE r.i <= ${onlyWhen.from} OR (${onlyWhen.when})` : Prisma.empty;
  const sql = Prisma.sql`
    ${rows} s AS (
      UPDATE sessions SET last_seq = last_seq + ${n}, updated_at = now(),
        spent_input_tokens = spent_input_tokens + ${add.inputTokens},
        spent_output_tokens = spent_output_tokens + ${add.outputTokens},
        spent_cached_tokens = spent_cached_tokens + ${add.cachedInputTokens},
        spent_cost_nanos = spent_cost_nanos + ${add.costNanos}
        ${add.settlesReservation ? Prisma.sql`, reserved_tokens = 0, reserved_cost_nanos = 0` : Prisma.empty}
        ${change?.set ? Prisma.sql`, ${change.set}` : Prisma.empty}
      WHERE id = ${sessionId}
        AND (NOT ${fenced} OR (lease_owner = ${lease?.owner ?? null} AND lease_token = ${lease?.token ?? null}))
        ${change?.where ? Prisma.sql`AND (${change.where})` : Prisma.empty}
        ${claim?.required ? Prisma.sql`AND EXISTS (SELECT 1 FROM claimed_rows)` : Prisma.empty}
      RETURNING last_seq
    ), ins AS (
      INSERT INTO session_events (session_id, seq, kind, turn_id, message_id, payload, created_at)
      SELECT ${sessionId}, s.last_seq - ${n} + r.i::int, r.v->>'kind', r.v->>'turnId', r.v->>'messageId', r.v->'payload', ${createdAt}::timestamptz
      FROM s, ${from} ${only}
      RETURNING seq, payload
    )
    SELECT ins.seq, ins.payload FROM ins ORDER BY ins.seq`;
  // The events come back as stored: a payload read from the log later is the same to the letter
  // (jsonb orders object keys its own way), for the live feeds and the driver's own history.
  return { sql, read: (result) => StoredRows.parse(result).map((r) => ({ seq: r.seq, createdAt, payload: r.payload })) };
}

export function leaseLost(sessionId: SessionId): AppError {
  return new AppError("LEASE_LOST", `Lease on ${sessionId} is no longer held`);
}

/** `appendStatement`'s events, all of them, or the error saying why none were appended. */
export function appended(events: SessionEvent[], n: number, sessionId: SessionId, lease: Lease | null): SessionEvent[] {
  if (events.length === n) return events;
  if (lease) throw leaseLost(sessionId);
  throw new AppError("SESSION_NOT_FOUND", `Session ${sessionId} not found`);
}

/** Appends (appendStatement) and throws LEASE_LOST or SESSION_NOT_FOUND when nothing was. */
export async function appendEvents(
  db: SqlRunner,
  sessionId: SessionId,
  payloads: EventPayload[],
  lease: Lease | null,
  spend?: SpendDelta,
  change?: SessionRowChange,
): Promise<SessionEvent[]> {
  if (payloads.length === 0) return [];
  const statement = appendStatement(sessionId, payloads, lease, spend, change);
  return appended(statement.read(await db.$queryRaw(statement.sql)), payloads.length, sessionId, lease);
}

/**
 * The lease's lock for a transaction that commits with a fenced append (commitWith): the
 * session row, locked as the append's UPDATE would, while the lease is ours, so nothing can
 * take the lease before this transaction ends. Gives the stored stop or interrupt request;
 * no row means the lease is lost.
 */
export function leaseLockStatement(sessionId: SessionId, lease: Lease): Statement<{ abortRequest: "stop" | "interrupt" | null }> {
  return {
    sql: Prisma.sql`SELECT abort_request FROM sessions
      WHERE id = ${sessionId} AND lease_owner = ${lease.owner} AND lease_token = ${lease.token} FOR NO KEY UPDATE`,
    read: (rows) => {
      const row = AbortRequestRows.parse(rows)[0];
      if (!row) throw leaseLost(sessionId);
      return { abortRequest: row.abort_request };
    },
  };
}
/** Rows of sessions.abort_request: a stop or interrupt requested and not yet carried out. */
export const AbortRequestRows = z.array(z.object({ abort_request: z.enum(["stop", "interrupt"]).nullable() }));

/** Rows of one `id` column. */
export const IdRows = z.array(z.object({ id: z.string() }));

/**
 * Inside a transaction: holds a share lock on the session row while the lease is still ours
 * (a process taking the lease over waits for this transaction), or throws LEASE_LOST.
 */
export async function assertLeaseHeld(tx: SqlRunner, sessionId: SessionId, lease: Lease): Promise<void> {
  const rows = IdRows.parse(
    await tx.$queryRaw`SELECT id FROM sessions
      WHERE id = ${sessionId} AND lease_owner = ${lease.owner} AND lease_token = ${lease.token} FOR SHARE`,
  );
  if (rows.length === 0) throw leaseLost(sessionId);
}

function messageIdOf(p: EventPayload): string | null {
  return p.kind === "user_message" || p.kind === "assistant_message" ? p.messageId : null;
}

const EventRows = z.array(z.object({ seq: z.number().int(), createdAt: z.date(), payload: EventPayloadSchema }));

function parseRows(rows: unknown): SessionEvent[] {
  return EventRows.parse(rows);
}

/** Rows per query when a whole history is read. */
const READ_PAGE = 5_000;

/**
 * Events with seq > afterSeq, ascending: at most `limit` of them (a page), or without a limit
 * every one — read page by page, never cut short (histories drive resume, forks, compaction).
 */
export async function readEventsAfter(
  db: SqlRunner,
  sessionId: SessionId,
  afterSeq = 0,
  limit?: number,
): Promise<SessionEvent[]> {
  const page = async (after: number, take: number) =>
    parseRows(
      await db.$queryRaw`SELECT seq, created_at AS "createdAt", payload FROM session_events
        WHERE session_id = ${sessionId} AND seq > ${after} ORDER BY seq LIMIT ${take}`,
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
  db: SqlRunner,
  sessionId: SessionId,
  beforeSeq: number | undefined,
  limit: number,
): Promise<SessionEvent[]> {
  const rows = await db.$queryRaw`SELECT seq, created_at AS "createdAt", payload FROM session_events
    WHERE session_id = ${sessionId} AND (${beforeSeq ?? null}::int IS NULL OR seq < ${beforeSeq ?? null}::int)
    ORDER BY seq DESC LIMIT ${limit}`;
  return parseRows(rows).reverse();
}
