import { z } from "zod";
import { Prisma } from "../db/generated/client";
import type { SqlRunner } from "../db/sql";
import type { ContextProvider } from "../runtime/context-registry";
import { anyWordSql, fitting, HitRows, rankedSql } from "./store";
import { LIMITS } from "../../shared/limits";

// memory:relevant (SPEC.md §20): the approved memories most relevant to what the member works on
// now (the input it is about to take, its latest prompt or team message, and the tasks it has
// in progress), as many as fit the team's token setting, as an optional runtime-context section
// after identity. The snapshot rule (§5) appends it only when it changed, so unchanged memories
// add nothing to a step. One statement: it runs at every step's start.

export const MEMORY_CONTEXT = "memory:relevant";
/** About 4 characters a token. */
const CHARS_PER_TOKEN = 4;

/**
 * The member's current work, as text to rank memories against: the input the step is about to
 * claim (rendered before the claim, in the same start), its latest prompt or team message, and
 * its tasks in progress in `team` (an SQL expression).
 */
function currentWorkSql(sessionId: string, team: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`SELECT string_agg(w.text, E'\\n') AS text FROM (
       (SELECT text FROM inbox_items WHERE session_id = ${sessionId} AND mode = 'steer')
       UNION ALL
       (SELECT text FROM inbox_items WHERE session_id = ${sessionId} AND mode = 'queue' ORDER BY position LIMIT 1)
       UNION ALL
       (SELECT payload->>'text' AS text FROM session_events
         WHERE session_id = ${sessionId} AND kind = 'user_message' AND payload->'source'->>'kind' IN ('human', 'team')
         ORDER BY seq DESC LIMIT 1)
       UNION ALL
       (SELECT subject || ' ' || description AS text FROM team_tasks
         WHERE team_id = ${team} AND owner_session_id = ${sessionId} AND status = 'in_progress')) w`;
}

const Rows = z.array(HitRows.element.extend({ tokens: z.number().int() }));

export function relevantMemoriesSql(sessionId: string): Prisma.Sql {
  // A team with no approved memories, not reading the shared ones, has nothing to rank.
  return Prisma.sql`WITH me AS (SELECT s.team_id, t.memory_context_tokens AS tokens FROM sessions s JOIN teams t ON t.id = s.team_id
          WHERE s.id = ${sessionId} AND (t.memories_approved > 0 OR t.memory_shared)),
        work AS (${currentWorkSql(sessionId, Prisma.sql`(SELECT team_id FROM me)`)})
      SELECT r.*, me.tokens FROM me, work, LATERAL (${rankedSql(Prisma.sql`me.team_id`, anyWordSql(Prisma.sql`work.text`), LIMITS.memorySearchResults)}) r
      WHERE me.tokens > 0`;
}

/** The approved memories relevant to a member's current work that fit its team's setting, best first. */
export async function relevantMemories(db: SqlRunner, sessionId: string) {
  const rows = Rows.parse(await db.$queryRaw(relevantMemoriesSql(sessionId)));
  // The whole section stays within the bound: its heading, and each memory's line.
  const memories = rows.map(({ rank: _rank, tokens: _tokens, ...m }) => m);
  return fitting(memories, (rows[0]?.tokens ?? 0) * CHARS_PER_TOKEN - HEADING.length, (m) => line(m).length + 1);
}

const HEADING = "Approved team memories relevant to your current work (memory_search finds more):";
/** The line each memory gets: its id (for memory_propose's `replaces`) and its text. */
const line = (m: { id: string; text: string }) => `- [${m.id}] ${m.text}`;

export function formatMemories(memories: readonly { id: string; text: string }[]): string | null {
  if (memories.length === 0) return null;
  return [HEADING, ...memories.map(line)].join("\n");
}

export function memoryContextProvider(fallback: SqlRunner): ContextProvider {
  return {
    name: MEMORY_CONTEXT,
    required: false,
    async render({ sessionId, db = fallback }) {
      return formatMemories(await relevantMemories(db, sessionId));
    },
  };
}
