import { z } from "zod";
import type { Tx } from "../db/client";
import { Prisma } from "../db/generated/client";
import type { SqlRunner } from "../db/sql";
import { AppError } from "../errors";
import { newMemoryId } from "../ids";
import { PersonRefSchema, type PersonRef } from "../person-ref";
import { LIMITS } from "../../shared/limits";
import { excerpt, recordTeamEvent } from "../runtime/team-events";
import { notifyActivity, notifyNotified } from "../db/notify";

// Team memory (SPEC.md §20): what a team's agents (or people) propose to remember, decided once
// by a person. A memory belongs to a team, or (team null) to the instance's shared memory, which
// a team reads when its setting says so. Only approved memories are searched. A decision is a
// compare-and-set on the proposed row (the first wins, like approvals); an edit keeps the text
// it replaces in memory_versions; an approved memory that replaces another retires it.
// Access (who may propose, decide, edit) is the caller's: this module knows no HTTP.

export const MEMORY_STATUSES = ["proposed", "approved", "rejected", "replaced", "deleted"] as const;
export type MemoryStatus = (typeof MEMORY_STATUSES)[number];

/** Who proposed a memory: a member's step (its session, the event's seq), or a person. */
export const ProposerSchema = z.discriminatedUnion("kind", [
  // teamId: the member's team, when the memory is not that team's (a copy in the shared memory).
  z.object({ kind: z.literal("member"), name: z.string(), sessionId: z.string(), seq: z.number().int().nullable(), teamId: z.string().optional() }),
  z.object({ kind: z.literal("person"), id: z.string(), name: z.string() }),
]);
export type Proposer = z.infer<typeof ProposerSchema>;

/** Who decided: a person, or the team's auto-approve setting. */
export const DeciderSchema = z.union([PersonRefSchema, z.object({ auto: z.literal(true) })]);

export const MemoryTextSchema = z
  .string()
  .trim()
  .min(1)
  .refine((t) => Buffer.byteLength(t, "utf8") <= LIMITS.memoryTextBytes, `At most ${LIMITS.memoryTextBytes} bytes`);
export const MemoryTagsSchema = z
  .array(z.string().trim().toLowerCase().min(1).max(LIMITS.memoryTagChars))
  .max(LIMITS.memoryTags)
  .transform((tags) => [...new Set(tags)]);

export const MemoryViewSchema = z.object({
  id: z.string(),
  teamId: z.string().nullable(),
  text: z.string(),
  tags: z.array(z.string()),
  status: z.enum(MEMORY_STATUSES),
  version: z.number().int(),
  replacesId: z.string().nullable(),
  proposedBy: ProposerSchema,
  decidedBy: DeciderSchema.nullable(),
  decidedAt: z.date().nullable(),
  note: z.string().nullable(),
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type MemoryView = z.infer<typeof MemoryViewSchema>;

const Rows = z.array(MemoryViewSchema);

/** A memory's columns under MemoryView's names, so a row read back is parsed by its one schema. */
const COLUMNS = Prisma.raw(
  `id, team_id AS "teamId", text, COALESCE(tags, '{}') AS tags, status, version, replaces_id AS "replacesId", proposed_by AS "proposedBy",
   decided_by AS "decidedBy", decided_at AS "decidedAt", note, created_at AS "createdAt", updated_at AS "updatedAt"`,
);

/** The memory with this id in this scope (a team, or null for the instance's), locked when asked. */
export async function getMemory(db: SqlRunner, teamId: string | null, memoryId: string, lock = false): Promise<MemoryView> {
  const [m] = Rows.parse(
    await db.$queryRaw`SELECT ${COLUMNS} FROM memories
      WHERE id = ${memoryId} AND team_id IS NOT DISTINCT FROM ${teamId} AND status <> 'deleted' ${lock ? Prisma.sql`FOR UPDATE` : Prisma.empty}`,
  );
  if (!m) throw new AppError("MEMORY_NOT_FOUND", "No such memory here", { memoryId });
  return m;
}

function conflict(m: MemoryView, wanted: string): AppError {
  const who = m.decidedBy && "name" in m.decidedBy ? ` by ${m.decidedBy.name}` : "";
  return new AppError("MEMORY_CONFLICT", `This memory is ${m.status}${who}; ${wanted}`, { memoryId: m.id, status: m.status, decidedBy: m.decidedBy });
}

export interface Proposal {
  teamId: string | null;
  text: string;
  tags: readonly string[];
  /** An approved memory of the same scope that this one replaces once approved. */
  replacesId?: string | null;
  by: Proposer;
  /** The proposing tool call's key: the same call proposed again returns its first memory. */
  callKey?: string | null;
}

/**
 * Records a proposal (in the caller's transaction: a tool's result commits with it). A team
 * whose setting auto-approves gets it approved at once. `again` says the call key had already
 * proposed it, and nothing new was written.
 */
export async function proposeMemory(tx: Tx, p: Proposal): Promise<{ memory: MemoryView; again: boolean }> {
  if (p.callKey) {
    const [earlier] = Rows.parse(await tx.$queryRaw`SELECT ${COLUMNS} FROM memories WHERE tool_call_key = ${p.callKey}`);
    if (earlier) return { memory: earlier, again: true };
  }
  if (p.replacesId) {
    const replaced = await getMemory(tx, p.teamId, p.replacesId);
    if (replaced.status !== "approved") throw conflict(replaced, "only an approved memory can be replaced");
  }
  const [team] = z
    .array(z.object({ memory_auto_approve: z.boolean() }))
    .parse(p.teamId ? await tx.$queryRaw`SELECT memory_auto_approve FROM teams WHERE id = ${p.teamId}` : []);
  const auto = team?.memory_auto_approve ?? false;
  const source = p.by.kind === "member" ? p.by : null;
  const [m] = Rows.parse(
    await tx.$queryRaw`INSERT INTO memories (id, team_id, text, tags, status, replaces_id, source_session_id, source_seq, source_member, tool_call_key, proposed_by, decided_by, decided_at)
      VALUES (${newMemoryId()}, ${p.teamId}, ${p.text}, ${[...p.tags]}::text[], ${auto ? "approved" : "proposed"}, ${p.replacesId ?? null},
        ${source?.sessionId ?? null}, ${source?.seq ?? null}, ${source?.name ?? null}, ${p.callKey ?? null}, ${JSON.stringify(p.by)}::jsonb,
        ${auto ? JSON.stringify({ auto: true }) : null}::jsonb, ${auto ? Prisma.sql`now()` : Prisma.sql`NULL`})
      RETURNING ${COLUMNS}`,
  );
  await announce(tx, m!);
  if (auto) await retireReplaced(tx, m!);
  // People who decide are told (notifications, webhooks); a shared memory's owners curate it in place.
  else if (p.teamId) await recordTeamEvent(tx, p.teamId, `memory:${m!.id}`, { kind: "memory.proposed", memoryId: m!.id, by: p.by.name, text: excerpt(p.text) });
  return { memory: m!, again: false };
}

/**
 * A change of a team's memories is announced on the team (its room's Memory tab), and to the
 * people whose inbox holds its proposal (the notification stops waiting, live).
 */
async function announce(tx: SqlRunner, m: MemoryView): Promise<void> {
  if (!m.teamId) return;
  await notifyActivity(tx, m.teamId, "memory");
  if (m.status !== "proposed") await notifyNotified(tx, "memory_id", m.id);
}

/** An approved memory that replaces another retires it (the older text stays, as replaced). */
async function retireReplaced(tx: Tx, m: MemoryView): Promise<void> {
  if (!m.replacesId) return;
  await tx.$executeRaw`UPDATE memories SET status = 'replaced', updated_at = now() WHERE id = ${m.replacesId} AND status = 'approved'`;
}

/** Keeps the current text as a version and writes the new one. */
async function rewrite(tx: Tx, m: MemoryView, by: PersonRef, edit: { text: string; tags: readonly string[] }): Promise<void> {
  await tx.$executeRaw`INSERT INTO memory_versions (memory_id, version, text, tags, edited_by)
    VALUES (${m.id}, ${m.version}, ${m.text}, ${m.tags}::text[], ${JSON.stringify(by)}::jsonb)`;
  await tx.$executeRaw`UPDATE memories SET text = ${edit.text}, tags = ${[...edit.tags]}::text[], version = version + 1, updated_at = now() WHERE id = ${m.id}`;
}

export interface Decision {
  approve: boolean;
  note?: string | null;
  /** Approve it as edited (the proposed text is kept as a version). */
  edit?: { text: string; tags: readonly string[] } | null;
}

/**
 * A person approves (as proposed, or edited) or rejects a proposal, in the caller's transaction:
 * the first decision wins (the row is locked, then checked).
 */
export async function decideMemory(tx: Tx, teamId: string | null, memoryId: string, by: PersonRef, d: Decision): Promise<MemoryView> {
  const m = await getMemory(tx, teamId, memoryId, true);
  if (m.status !== "proposed") throw conflict(m, "it was already decided");
  if (d.edit && !d.approve) throw new AppError("INVALID_INPUT", "An edit goes with an approval, not a rejection");
  if (d.edit) await rewrite(tx, m, by, d.edit);
  await tx.$executeRaw`UPDATE memories SET status = ${d.approve ? "approved" : "rejected"}, decided_by = ${JSON.stringify(by)}::jsonb,
      decided_at = now(), note = ${d.note ?? null}, updated_at = now() WHERE id = ${m.id}`;
  const decided = await getMemory(tx, teamId, memoryId);
  await announce(tx, decided);
  if (d.approve) await retireReplaced(tx, decided);
  return decided;
}

/** A person edits an approved memory (in the caller's transaction); the text it had is kept as a version. */
export async function editMemory(tx: Tx, teamId: string | null, memoryId: string, by: PersonRef, edit: { text: string; tags: readonly string[] }): Promise<MemoryView> {
  const m = await getMemory(tx, teamId, memoryId, true);
  if (m.status !== "approved") throw conflict(m, "only an approved memory is edited (decide a proposal instead)");
  await rewrite(tx, m, by, edit);
  const edited = await getMemory(tx, teamId, memoryId);
  await announce(tx, edited);
  return edited;
}

/** Deletes a memory (a proposal or an approved one): it is no longer found, read or listed. */
export async function deleteMemory(tx: Tx, teamId: string | null, memoryId: string): Promise<MemoryView> {
  const m = await getMemory(tx, teamId, memoryId, true);
  await tx.$executeRaw`UPDATE memories SET status = 'deleted', updated_at = now() WHERE id = ${m.id}`;
  await announce(tx, { ...m, status: "deleted" });
  return m;
}

export const MemoryVersionSchema = z.object({ version: z.number().int(), text: z.string(), tags: z.array(z.string()), editedBy: PersonRefSchema, editedAt: z.date() });
export type MemoryVersion = z.infer<typeof MemoryVersionSchema>;

/** A memory's earlier texts, newest first. */
export async function memoryVersions(db: SqlRunner, teamId: string | null, memoryId: string): Promise<MemoryVersion[]> {
  await getMemory(db, teamId, memoryId);
  const rows = z
    .array(z.object({ version: z.number().int(), text: z.string(), tags: z.array(z.string()).nullable(), edited_by: PersonRefSchema, edited_at: z.date() }))
    .parse(await db.$queryRaw`SELECT version, text, tags, edited_by, edited_at FROM memory_versions WHERE memory_id = ${memoryId} ORDER BY version DESC`);
  return rows.map((r) => ({ version: r.version, text: r.text, tags: r.tags ?? [], editedBy: r.edited_by, editedAt: r.edited_at }));
}

/** A scope's memories in a status (proposals first to review), newest first. */
export async function listMemories(db: SqlRunner, teamId: string | null, status: Exclude<MemoryStatus, "deleted">, limit = 200): Promise<MemoryView[]> {
  return Rows.parse(
    await db.$queryRaw`SELECT ${COLUMNS} FROM memories WHERE team_id IS NOT DISTINCT FROM ${teamId} AND status = ${status}
      ORDER BY updated_at DESC, id DESC LIMIT ${limit}`,
  );
}

export interface MemoryHit {
  memory: MemoryView;
  rank: number;
}

export const HitRows = z.array(MemoryViewSchema.extend({ rank: z.number() }));

/**
 * The statement that ranks the approved memories the agents of `team` (an SQL expression of its
 * id) may see against `query` (a tsquery expression), best first (rank, then the newest): the
 * team's own, and the instance's shared ones when the team reads them. Rows are HitRows.
 */
export function rankedSql(team: Prisma.Sql, query: Prisma.Sql, limit: number): Prisma.Sql {
  // Two scans, each on its own index (memories_team_search_idx, memories_shared_search_idx).
  return Prisma.sql`SELECT ${COLUMNS}, ts_rank_cd(m.search, q.query)::float8 AS rank
      FROM (SELECT ${query} AS query) q,
        LATERAL (SELECT * FROM memories WHERE team_id = ${team} AND status = 'approved' AND search @@ q.query
                 UNION ALL
                 SELECT * FROM memories WHERE team_id IS NULL AND status = 'approved' AND search @@ q.query
                   AND (SELECT memory_shared FROM teams WHERE id = ${team})) m
     ORDER BY rank DESC, m.updated_at DESC, m.id
     LIMIT ${limit}`;
}

/** Any of a text's words (an SQL expression), joined by OR: NULL when it has none, which matches nothing. */
export const anyWordSql = (text: Prisma.Sql): Prisma.Sql => Prisma.sql`nullif(replace(plainto_tsquery('english', ${text})::text, ' & ', ' | '), '')::tsquery`;

/**
 * Full-text search over the approved memories a team's agents may see, best first; a query in
 * web-search syntax ("quoted phrases", -excluded, or).
 */
export async function searchMemories(db: SqlRunner, q: { teamId: string; query: string; limit?: number }): Promise<MemoryHit[]> {
  const limit = Math.min(q.limit ?? LIMITS.memorySearchResults, LIMITS.memorySearchResults);
  const rows = HitRows.parse(await db.$queryRaw(rankedSql(Prisma.sql`${q.teamId}`, Prisma.sql`websearch_to_tsquery('english', ${q.query})`, limit)));
  return rows.map(({ rank, ...memory }) => ({ memory, rank }));
}

/** The best of `ranked` (best first) that fit in `maxChars` together, each `size` long. */
export function fitting<M>(ranked: readonly M[], maxChars: number, size: (m: M) => number): M[] {
  const out: M[] = [];
  let used = 0;
  for (const m of ranked) {
    if (used + size(m) > maxChars) break;
    out.push(m);
    used += size(m);
  }
  return out;
}

export const MemorySummarySchema = z.object({ proposed: z.number().int(), approved: z.number().int(), lastChange: z.number() });
export type MemorySummary = z.infer<typeof MemorySummarySchema>;

/** A team's memory at a glance: proposals waiting, approved memories, its newest change (ms). */
export async function memorySummary(db: SqlRunner, teamId: string): Promise<MemorySummary> {
  const [row] = z
    .array(z.object({ proposed: z.number().int(), approved: z.number().int(), last_change: z.number() }))
    .parse(
      await db.$queryRaw`SELECT count(*) FILTER (WHERE status = 'proposed')::int AS proposed, count(*) FILTER (WHERE status = 'approved')::int AS approved,
          COALESCE(floor(extract(epoch FROM max(updated_at)) * 1000), 0)::float8 AS last_change
        FROM memories WHERE team_id = ${teamId}`,
    );
  return { proposed: row!.proposed, approved: row!.approved, lastChange: row!.last_change };
}

/**
 * A fork's team memory (SPEC.md §20): the source team's memories that were approved at the
 * fork point, with the text they had then (the version an edit after it replaced), as the new
 * team's own. Their source stays the step in the source team that learned them.
 */
export async function copyMemoriesAsOf(tx: Tx, sourceTeamId: string, teamId: string, at: Date): Promise<number> {
  return tx.$executeRaw`INSERT INTO memories (id, team_id, text, tags, status, source_session_id, source_seq, source_member, proposed_by, decided_by, decided_at, note)
    SELECT ${newMemoryId()} || '_' || row_number() OVER (ORDER BY m.created_at, m.id), ${teamId},
        COALESCE(v.text, m.text), COALESCE(v.tags, m.tags), 'approved', m.source_session_id, m.source_seq, m.source_member,
        CASE WHEN m.proposed_by->>'kind' = 'member' THEN m.proposed_by || jsonb_build_object('teamId', COALESCE(m.proposed_by->>'teamId', ${sourceTeamId})) ELSE m.proposed_by END,
        m.decided_by, m.decided_at, m.note
      FROM memories m
      LEFT JOIN LATERAL (SELECT text, tags FROM memory_versions WHERE memory_id = m.id AND edited_at > ${at} ORDER BY version LIMIT 1) v ON true
     WHERE m.team_id = ${sourceTeamId} AND m.decided_at <= ${at}
       AND (m.status = 'approved' OR (m.status IN ('replaced', 'deleted') AND m.updated_at > ${at}))`;
}
