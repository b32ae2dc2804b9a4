import { z } from "zod";
import { Prisma } from "../db/generated/client";
import { asJson, inTx, type Db, type DbOrTx, type Tx } from "../db/client";
import type { SqlRunner } from "../db/sql";
import { AppError } from "../errors";
import { asSessionId, newSessionId, type SessionId, type UserId } from "../ids";
import { notifyActivity } from "../db/notify";
import { cancelPending, startingToolPolicy } from "./approvals";
import type { Spend } from "../models/catalog";
import { ModelChoiceSchema, type ModelChoice } from "../models/choice";
import { recordAction, type HumanActor } from "../people/actions";
import type { Person } from "../people/person";
import { PersonRefSchema, ref } from "../person-ref";
import { addOwner, teamsOf } from "../people/team-people";
import type { EventPayload } from "./events";
import { enqueue, INBOX_ITEM_COLUMNS, InboxItemSchema, type InboxItemView } from "./inbox";
import { copyWorkspaceAsOf } from "../workspace/fork";
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

/** The spend counters (runtime/agent.ts adds each step's usage and cost in its message's transaction). */
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

/** A new session is a Lead: the root of its own (empty) team, whose id is the session id. */
export async function createSession(db: Db, input: { title: string; model: ModelChoice; by?: Person }): Promise<SessionView> {
  return inTx(db, async (tx) => {
    const id = newSessionId();
    await tx.team.create({ data: { id } });
    const row = await tx.session.create({
      data: { id, teamId: id, title: input.title, model: asJson(input.model), createdBy: input.by ? asJson(ref(input.by)) : undefined },
      select: sessionSelect,
    });
    if (input.by) await ownNewTeam(tx, id, input.by, "team_created", {});
    return toView(row);
  });
}

/** The creator (or forker) owns the new team; the action is recorded with it. */
async function ownNewTeam(tx: Tx, teamId: SessionId, person: Person, action: "team_created" | "fork", detail: Record<string, unknown>) {
  await addOwner(tx, teamId, person);
  await startingToolPolicy(tx, teamId);
  await recordAction(tx, { person, teamId }, action, { sessionId: teamId, detail });
}

export async function getSession(db: DbOrTx, sessionId: SessionId): Promise<SessionView> {
  const row = await db.session.findUnique({ where: { id: sessionId }, select: sessionSelect });
  if (!row) throw new AppError("SESSION_NOT_FOUND", `Session ${sessionId} not found`, { sessionId });
  return toView(row);
}

const RecordRows = z.array(z.record(z.string(), z.unknown()));
const QueuedInput = z.array(InboxItemSchema.extend({ createdAt: z.coerce.date() }));

/**
 * The session with its pending input in position order, in one statement: what its room shows,
 * re-read by the live feed at every turn's end and claim.
 */
export async function getSessionWithInbox(db: SqlRunner, sessionId: SessionId): Promise<{ session: SessionView; inbox: InboxItemView[] }> {
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

/** Sessions, newest activity first; given a person, only those of the teams they belong to. */
export async function listSessions(db: DbOrTx, opts: { limit?: number; userId?: UserId } = {}): Promise<SessionView[]> {
  const rows = await db.session.findMany({
    where: opts.userId ? { teamId: { in: [...(await teamsOf(db, opts.userId)).keys()] } } : undefined,
    orderBy: { updatedAt: "desc" },
    take: opts.limit ?? 100,
    select: sessionSelect,
  });
  return rows.map(toView);
}

/** Queue adapter: a human prompt becomes its own turn, after the prompts queued before it. */
export async function promptSession(
  db: DbOrTx,
  sessionId: SessionId,
  /** `traceparent`: the request's trace, which the turn's trace links to (server/http/tracing.ts). */
  input: { text: string; by?: HumanActor; traceparent?: string },
): Promise<InboxItemView> {
  const { by } = input;
  const trace = input.traceparent ? { traceparent: input.traceparent } : {};
  return inTx(db, async (tx) => {
    const item = await enqueue(tx, sessionId, {
      mode: "queue",
      text: input.text,
      source: by ? { kind: "human", userId: by.person.id, name: by.person.name, ...trace } : { kind: "human", ...trace },
    });
    if (by) await recordAction(tx, by, "prompt", { sessionId, detail: { itemId: item.id } });
    return item;
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
  by?: HumanActor,
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
    if (aborting && (await cancelPending(tx, sessionId, by ? { id: by.person.id, name: by.person.name } : null)) > 0) {
      await notifyActivity(tx, sessionId, "inbox");
    }
    if (by) await recordAction(tx, by, "stop", { sessionId, detail: { aborting } });
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

/**
 * A new independent session seeded with the source's completed turns: through the end of the
 * turn containing `throughSeq` (or all completed turns). Streamed deltas are not copied; the
 * final assistant messages carry the text.
 */
export async function forkSession(
  db: Db,
  sourceId: SessionId,
  input: { throughSeq?: number; title?: string; by?: HumanActor },
): Promise<SessionView> {
  const source = await getSession(db, sourceId);
  if (input.throughSeq !== undefined && (input.throughSeq < 1 || input.throughSeq > source.lastSeq)) {
    throw new AppError("FORK_POINT_INVALID", `Seq ${input.throughSeq} is not in session ${sourceId}`, { lastSeq: source.lastSeq });
  }
  const { seed, cut } = await completedTurnsSeed(db, sourceId, input.throughSeq);
  // The fork point's moment: the source team's workspace is copied as it was then (SPEC.md §14).
  const { teamId: sourceTeam } = await db.session.findUniqueOrThrow({ where: { id: sourceId }, select: { teamId: true } });
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
        createdBy: input.by ? asJson(ref(input.by.person)) : undefined,
      },
    });
    if (input.by) {
      // Recorded in the source team (who forked what) and in the new one (who owns it).
      await recordAction(tx, input.by, "fork", { sessionId: sourceId, detail: { forkId: id, throughSeq: cut } });
      await ownNewTeam(tx, id, input.by.person, "fork", { sourceId, throughSeq: cut });
    }
    await appendEvents(tx, id, seed, null);
    if (cutAt && sourceTeam) await copyWorkspaceAsOf(tx, asSessionId(sourceTeam), id, cutAt);
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

