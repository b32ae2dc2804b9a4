import { z } from "zod";
import { Prisma } from "../db/generated/client";
import { asJson, inTx, type Db, type DbOrTx, type Tx } from "../db/client";
import type { SqlRunner } from "../db/sql";
import { AppError } from "../errors";
import { asSessionId, newSessionId, type SessionId } from "../ids";
import { notifyActivity } from "../db/notify";
import { cancelPending } from "./approvals";
import type { Spend } from "../models/catalog";
import { ModelChoiceSchema, type ModelChoice } from "../models/choice";
import { PersonRefSchema, type PersonRef } from "../person-ref";
import type { EventPayload } from "./events";
import { enqueue, INBOX_ITEM_COLUMNS, InboxItemSchema, type InboxItemView } from "./inbox";
import { AbortRequestRows, appendEvents, readEventsAfter } from "./session-log";

// Sessions as the product sees them: create, list, read, prompt, stop, fork. Plain domain
// functions over the database; the tRPC layer only validates and maps errors.

export const AgentStatusSchema = z.enum(["provisioning", "running", "idle", "inactive", "failed", "waiting_approval", "waiting_answer"]);
export type AgentStatus = z.infer<typeof AgentStatusSchema>;

export const SessionViewSchema = z.object({
  id: z.string(),
  title: z.string(),
  model: ModelChoiceSchema,
  status: AgentStatusSchema,
  lastSeq: z.number().int(),
  running: z.boolean(),
  optionalContext: z.boolean(),
  forkedFromId: z.string().nullable(),
  /** The person who created or forked it. */
  createdBy: PersonRefSchema.nullable(),
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type SessionView = z.infer<typeof SessionViewSchema>;

/** The columns deriveStatus reads: select them wherever a status is shown. */
export const STATUS_COLUMNS = { status: true, activeTurnId: true, leaseOwner: true, leaseExpiresAt: true, waitingFor: true } as const;

const sessionSelect = {
  ...STATUS_COLUMNS,
  id: true,
  title: true,
  model: true,
  lastSeq: true,
  optionalContext: true,
  forkedFromId: true,
  createdBy: true,
  createdAt: true,
  updatedAt: true,
} as const;

/** The spend counters (runtime/model-step.ts adds each step's usage and cost in its message's transaction). */
export const SPEND_COLUMNS = { spentInputTokens: true, spentOutputTokens: true, spentCachedTokens: true, spentCostNanos: true } as const;

type SpendRow = { spentInputTokens: bigint; spentOutputTokens: bigint; spentCachedTokens: bigint; spentCostNanos: bigint };

/**
 * A team's spend: the sums of its sessions' counters, as a LATERAL subquery with the columns
 * of SpendRow, for `teamId` (a column or a value). The one query of a team's spend: the budget
 * check, the team list and the room read it.
 */
export function teamSpendSums(teamId: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`LATERAL (SELECT
      COALESCE(sum(spent_input_tokens), 0)::bigint AS "spentInputTokens",
      COALESCE(sum(spent_output_tokens), 0)::bigint AS "spentOutputTokens",
      COALESCE(sum(spent_cached_tokens), 0)::bigint AS "spentCachedTokens",
      COALESCE(sum(spent_cost_nanos), 0)::bigint AS "spentCostNanos"
    FROM sessions WHERE team_id = ${teamId})`;
}

/** SpendRow as raw queries return it. */
export const SpendRowSchema = z.object({
  spentInputTokens: z.bigint(),
  spentOutputTokens: z.bigint(),
  spentCachedTokens: z.bigint(),
  spentCostNanos: z.bigint(),
});

/** A session's spend as shown (numbers: far below 2^53 for any real spend). */
export function spendOf(row: SpendRow): Spend {
  return {
    inputTokens: Number(row.spentInputTokens),
    outputTokens: Number(row.spentOutputTokens),
    cachedTokens: Number(row.spentCachedTokens),
    costNanos: Number(row.spentCostNanos),
  };
}

const SessionStatusRow = z.object({
  status: z.string(),
  activeTurnId: z.string().nullable(),
  leaseOwner: z.string().nullable(),
  leaseExpiresAt: z.date().nullable(),
  waitingFor: z.string().nullable(),
});
type SessionRow = z.infer<typeof SessionStatusRow>;

/** Status as shown everywhere: no live lease means nobody drives it, so it is inactive. */
export function deriveStatus(row: SessionRow, now = new Date()): AgentStatus {
  if (row.status === "provisioning" || row.status === "failed") return row.status;
  // Parked for people (runtime/approvals.ts): no driver holds it, and none is needed.
  if (row.waitingFor === "approval") return "waiting_approval";
  if (row.waitingFor === "answer") return "waiting_answer";
  const live = row.leaseOwner !== null && row.leaseExpiresAt !== null && row.leaseExpiresAt > now;
  if (!live) return "inactive";
  if (row.activeTurnId) return "running";
  // A driver only takes the lease when there is work: until it reports idle, it is running.
  return row.status === "idle" ? "idle" : "running";
}

function toView(row: SessionRow & Record<string, unknown>): SessionView {
  return SessionViewSchema.parse({ ...row, status: deriveStatus(row), running: row.activeTurnId !== null });
}

/**
 * A new session is a Lead: the root of its own (empty) team, whose id is the session id.
 * Who owns it is the caller's business (team/person-actions.ts), in the same transaction.
 */
export async function createSession(db: DbOrTx, input: { title: string; model: ModelChoice; createdBy?: PersonRef }): Promise<SessionView> {
  return inTx(db, async (tx) => {
    const id = newSessionId();
    await tx.team.create({ data: { id } });
    const row = await tx.session.create({
      data: { id, teamId: id, title: input.title, model: asJson(input.model), createdBy: input.createdBy ? asJson(input.createdBy) : undefined },
      select: sessionSelect,
    });
    return toView(row);
  });
}

export async function getSession(db: DbOrTx, sessionId: SessionId): Promise<SessionView> {
  const row = await db.session.findUnique({ where: { id: sessionId }, select: sessionSelect });
  if (!row) throw new AppError("SESSION_NOT_FOUND", `Session ${sessionId} not found`, { sessionId });
  return toView(row);
}

const RecordRows = z.array(z.record(z.string(), z.unknown()));
const QueuedInput = z.array(InboxItemSchema.extend({ createdAt: z.coerce.date() }));

/** A session with its inbox, in queue order: what the room shows of an agent besides its events. */
export const SessionWithInboxSchema = z.object({ session: SessionViewSchema, inbox: z.array(InboxItemSchema) });
export type SessionWithInbox = z.infer<typeof SessionWithInboxSchema>;

/**
 * The session with its pending input in position order, in one statement: what its room shows,
 * re-read by the live feed at every turn's end and claim.
 */

export async function getSessionWithInbox(db: SqlRunner, sessionId: SessionId): Promise<SessionWithInbox> {
  const rows = RecordRows.parse(
    await db.$queryRaw`SELECT s.id, s.title, s.model, s.status, s.active_turn_id AS "activeTurnId", s.lease_owner AS "leaseOwner",
        s.lease_expires_at AS "leaseExpiresAt", s.waiting_for AS "waitingFor", s.last_seq AS "lastSeq", s.optional_context AS "optionalContext",
        s.forked_from_id AS "forkedFromId", s.created_by AS "createdBy", s.created_at AS "createdAt", s.updated_at AS "updatedAt",
        coalesce((SELECT json_agg(i ORDER BY i.position)
          FROM (SELECT ${INBOX_ITEM_COLUMNS} FROM inbox_items WHERE session_id = s.id) i), '[]'::json) AS inbox
      FROM sessions s WHERE s.id = ${sessionId}`,
  );
  const row = rows[0];
  if (!row) throw new AppError("SESSION_NOT_FOUND", `Session ${sessionId} not found`, { sessionId });
  const { inbox, ...session } = row;
  return { session: toView(SessionStatusRow.passthrough().parse(session)), inbox: QueuedInput.parse(inbox) };
}

/** Sessions, newest activity first; given teams, only theirs. */
export async function listSessions(db: DbOrTx, opts: { limit?: number; teamIds?: readonly string[] } = {}): Promise<SessionView[]> {
  const rows = await db.session.findMany({
    where: opts.teamIds ? { teamId: { in: [...opts.teamIds] } } : undefined,
    orderBy: { updatedAt: "desc" },
    take: opts.limit ?? 100,
    select: sessionSelect,
  });
  return rows.map(toView);
}

/** Queue adapter: a human prompt becomes its own turn, after the prompts queued before it. */
export async function promptSession(
  db: SqlRunner,
  sessionId: SessionId,
  /** `traceparent`: the request's trace, which the turn's trace links to (server/http/tracing.ts). */
  input: { text: string; from?: PersonRef; traceparent?: string },
): Promise<InboxItemView> {
  const { from } = input;
  const trace = input.traceparent ? { traceparent: input.traceparent } : {};
  return enqueue(db, sessionId, {
    mode: "queue",
    text: input.text,
    source: from ? { kind: "human", userId: from.id, name: from.name, ...trace } : { kind: "human", ...trace },
  });
}

/**
 * Human Stop ("stop") or the Lead's interrupt ("interrupt"): asks whichever process drives
 * the agent to abort the current turn. The inbox is kept; an interrupt also parks it until
 * the next waking input.
 */
export async function requestAbort(
  db: DbOrTx,
  sessionId: SessionId,
  kind: "stop" | "interrupt",
  by?: PersonRef,
): Promise<{ aborting: boolean }> {
  return inTx(db, async (tx) => {
    const n = await tx.$executeRaw`UPDATE sessions
      SET abort_request = CASE WHEN active_turn_id IS NULL THEN abort_request ELSE ${kind} END,
          parked = parked OR ${kind === "interrupt"}
      WHERE id = ${sessionId}`;
    if (n === 0) throw new AppError("SESSION_NOT_FOUND", `Session ${sessionId} not found`, { sessionId });
    const row = await tx.session.findUniqueOrThrow({ where: { id: sessionId }, select: { activeTurnId: true } });
    const aborting = row.activeTurnId !== null;
    // A turn parked for people has no driver to hear the request: what it waits for ends
    // cancelled, and a driver comes to close the turn (runtime/waiting-calls.ts).
    if (aborting && (await cancelPending(tx, sessionId, by ?? null)) > 0) {
      await notifyActivity(tx, sessionId, "inbox");
    }
    await notifyActivity(tx, sessionId, "abort");
    return { aborting };
  });
}

/** The stop or interrupt requested for the session's current turn and not yet carried out. */
export async function storedAbortRequest(db: SqlRunner, sessionId: SessionId): Promise<"stop" | "interrupt" | null> {
  const row = AbortRequestRows.parse(await db.$queryRaw`SELECT abort_request FROM sessions WHERE id = ${sessionId}`)[0];
  if (!row) throw new AppError("SESSION_NOT_FOUND", `Session ${sessionId} not found`);
  return row.abort_request;
}

/** What a fork was cut from, for whoever adds to it in its transaction (the workspace, the owner). */
export interface ForkPoint {
  id: SessionId;
  /** The last source seq copied (0: nothing). */
  cut: number;
  /** When that event was written: the fork point's moment. */
  cutAt: Date | null;
  sourceTeamId: SessionId | null;
}

/**
 * A new independent session seeded with the source's completed turns: through the end of the
 * turn containing `throughSeq` (or all completed turns). Streamed deltas are not copied; the
 * final assistant messages carry the text. `within` runs in the fork's transaction.
 */
export async function forkSession(
  db: Db,
  sourceId: SessionId,
  input: { throughSeq?: number; title?: string; createdBy?: PersonRef },
  within?: (tx: Tx, fork: ForkPoint) => Promise<void>,
): Promise<SessionView> {
  const source = await getSession(db, sourceId);
  if (input.throughSeq !== undefined && (input.throughSeq < 1 || input.throughSeq > source.lastSeq)) {
    throw new AppError("FORK_POINT_INVALID", `Seq ${input.throughSeq} is not in session ${sourceId}`, { lastSeq: source.lastSeq });
  }
  const { seed, cut } = await completedTurnsSeed(db, sourceId, input.throughSeq);
  const { teamId: sourceTeamId } = await db.session.findUniqueOrThrow({ where: { id: sourceId }, select: { teamId: true } });
  const cutAt = cut > 0 ? (await db.sessionEvent.findUniqueOrThrow({ where: { sessionId_seq: { sessionId: sourceId, seq: cut } } })).createdAt : null;
  return inTx(db, async (tx) => {
    // An ordinary fork is an independent Lead with an empty team, whatever its source was.
    const id = newSessionId();
    await tx.team.create({ data: { id } });
    await tx.session.create({
      data: {
        id,
        teamId: id,
        title: input.title ?? `${source.title} (fork)`,
        model: asJson(source.model),
        optionalContext: source.optionalContext,
        forkedFromId: sourceId,
        forkedFromSeq: cut,
        createdBy: input.createdBy ? asJson(input.createdBy) : undefined,
      },
    });
    await within?.(tx, { id, cut, cutAt, sourceTeamId: sourceTeamId ? asSessionId(sourceTeamId) : null });
    await appendEvents(tx, id, seed, null);
    await notifyActivity(tx, id, "state");
    const row = await tx.session.findUniqueOrThrow({ where: { id }, select: sessionSelect });
    return toView(row);
  });
}

/**
 * The events a fork starts from: the source's completed turns, through the end of the turn
 * containing `throughSeq` (or all of them), renumbered from 1. Streamed deltas are not copied.
 */
export async function completedTurnsSeed(
  db: DbOrTx,
  sourceId: SessionId,
  throughSeq?: number,
): Promise<{ seed: EventPayload[]; cut: number }> {
  const events = await readEventsAfter(db, sourceId, 0);
  const turnEnds = events.filter((e) => e.payload.kind === "turn_end").map((e) => e.seq);
  const cut =
    throughSeq === undefined
      ? (turnEnds.at(-1) ?? 0)
      : (turnEnds.find((s) => s >= throughSeq) ?? turnEnds.filter((s) => s < throughSeq).at(-1) ?? 0);
  const kept = events.filter((e) => e.seq <= cut && e.payload.kind !== "assistant_delta");
  // Renumbering keeps the order; compaction markers point at source seqs, so map them too.
  const newSeqOf = (through: number) => kept.filter((e) => e.seq <= through).length;
  const seed = kept.map(({ payload: p }) => (p.kind === "compaction" ? { ...p, throughSeq: newSeqOf(p.throughSeq) } : p));
  return { seed, cut };
}

