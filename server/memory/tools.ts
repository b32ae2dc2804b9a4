import { z } from "zod";
import { LIMITS } from "../../shared/limits";
import { membershipOf } from "../members/membership";
import { assistantMessageIdOfCallKey, defineTool, type ToolCallScope, type ToolDefinition } from "../runtime/tools";
import { MemoryTagsSchema, MemoryTextSchema, proposeMemory, searchMemories } from "./store";

// The two Memory tools (SPEC.md §20), beside the Team and Workspace tools: the same for every
// member. A proposal commits with the tool_result that reports it (`ctx.commit`) and is keyed by
// the call, so a crash or a retry never proposes it twice; the model is told whether it waits
// for a person or was approved by the team's setting.

/** The event of the step that made this call (its assistant message): the memory's source. */
async function sourceSeq(ctx: ToolCallScope): Promise<number | null> {
  const messageId = assistantMessageIdOfCallKey(ctx.callKey);
  if (!messageId) return null;
  const [row] = z
    .array(z.object({ seq: z.number().int() }))
    .parse(await ctx.db.sql.$queryRaw`SELECT seq FROM session_events WHERE session_id = ${ctx.sessionId} AND message_id = ${messageId}`);
  return row?.seq ?? null;
}

export function createMemoryTools(): ToolDefinition[] {
  return [
    defineTool({
      name: "memory_search",
      description:
        "Searches the team's approved memories (what earlier work learned: decisions, conventions, facts, mistakes not to repeat), best match first. Web-search syntax: words, \"a phrase\", -excluded.",
      input: z.object({ query: z.string().trim().min(1).max(500), limit: z.number().int().min(1).max(LIMITS.memorySearchResults).optional() }).strict(),
      output: z.object({ memories: z.array(z.object({ id: z.string(), text: z.string(), tags: z.array(z.string()), shared: z.literal(true).optional() })) }),
      async execute(input, ctx) {
        const me = await membershipOf(ctx.db.sql, ctx.sessionId);
        const hits = await searchMemories(ctx.db.sql, { teamId: me.teamId, query: input.query, limit: input.limit });
        return {
          memories: hits.map(({ memory: m }) => ({ id: m.id, text: m.text, tags: m.tags, ...(m.teamId === null ? { shared: true as const } : {}) })),
        };
      },
    }),
    defineTool({
      name: "memory_propose",
      description:
        "Proposes a memory for the team: one short, self-contained fact, decision or convention worth knowing in later work. People approve it before agents see it. Pass replaces (a memory's id) to propose a corrected version of it.",
      input: z.object({ text: MemoryTextSchema, tags: MemoryTagsSchema.optional(), replaces: z.string().min(1).max(100).optional() }).strict(),
      output: z.object({ id: z.string(), status: z.enum(["proposed", "approved"]), note: z.string() }),
      async execute(input, ctx) {
        const me = await membershipOf(ctx.db.sql, ctx.sessionId);
        const seq = await sourceSeq(ctx);
        return ctx.commit(async (tx) => {
          const { memory } = await proposeMemory(tx, {
            teamId: me.teamId,
            text: input.text,
            tags: input.tags ?? [],
            replacesId: input.replaces ?? null,
            by: { kind: "member", name: me.name, sessionId: ctx.sessionId, seq },
            callKey: ctx.callKey,
          });
          const status = memory.status === "approved" ? "approved" : "proposed";
          return {
            id: memory.id,
            status,
            note: status === "approved" ? "Approved by the team's setting: agents find it from now on." : "Waiting for a person to approve it; agents find it once approved.",
          };
        });
      },
    }),
  ];
}
