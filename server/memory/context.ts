import { z } from "zod";
import type { SqlRunner } from "../db/sql";
import { membershipOf } from "../members/membership";
import type { ContextProvider } from "../runtime/context-registry";
import { relevantMemories } from "./store";

// memory:relevant (SPEC.md §20): the approved memories most relevant to what the member works on
// now (the input it is about to take, its latest prompt or team message, and the tasks it has
// in progress), as an optional
// runtime-context section after identity. The snapshot rule (§5) appends it only when it changed,
// so unchanged memories add nothing to a step.

export const MEMORY_CONTEXT = "memory:relevant";
/** About 4 characters a token: the section stays within this many tokens of memory text. */
export const MEMORY_CONTEXT_TOKENS = 500;

/**
 * The member's current work, as text to rank memories against: the input the step is about to
 * claim (rendered before the claim, in the same start), its latest prompt or team message, and
 * its tasks in progress.
 */
async function currentWork(db: SqlRunner, sessionId: string, teamId: string): Promise<string> {
  const rows = z.array(z.object({ text: z.string() })).parse(
    await db.$queryRaw`(SELECT text FROM inbox_items WHERE session_id = ${sessionId} AND mode = 'steer')
       UNION ALL
       (SELECT text FROM inbox_items WHERE session_id = ${sessionId} AND mode = 'queue' ORDER BY position LIMIT 1)
       UNION ALL
       (SELECT payload->>'text' AS text FROM session_events
         WHERE session_id = ${sessionId} AND kind = 'user_message' AND payload->'source'->>'kind' IN ('human', 'team')
         ORDER BY seq DESC LIMIT 1)
       UNION ALL
       (SELECT subject || ' ' || description AS text FROM team_tasks
         WHERE team_id = ${teamId} AND owner_session_id = ${sessionId} AND status = 'in_progress')`,
  );
  return rows.map((r) => r.text).join("\n");
}

/** The line each memory gets: its id (for memory_propose's `replaces`) and its text. */
export function formatMemories(memories: readonly { id: string; text: string }[]): string | null {
  if (memories.length === 0) return null;
  return ["Approved team memories relevant to your current work (memory_search finds more):", ...memories.map((m) => `- [${m.id}] ${m.text}`)].join("\n");
}

export function memoryContextProvider(fallback: SqlRunner): ContextProvider {
  return {
    name: MEMORY_CONTEXT,
    required: false,
    async render({ sessionId, db = fallback }) {
      const me = await membershipOf(db, sessionId);
      const text = await currentWork(db, sessionId, me.teamId);
      if (!text.trim()) return null;
      return formatMemories(await relevantMemories(db, { teamId: me.teamId, text, maxChars: MEMORY_CONTEXT_TOKENS * 4 }));
    },
  };
}
