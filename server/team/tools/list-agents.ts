import { z } from "zod";
import { defineTool } from "../../runtime/tools";
import { membershipOf } from "../../members/membership";
import { listMembers } from "../roster";
import { CompactMember, compactMember } from "./views";

export const listAgentsTool = () =>
  defineTool({
    name: "list_agents",
    description: "Lists the team: the Lead first, then teammates in creation order, with live status.",
    input: z.object({}).strict(),
    output: z.object({ agents: z.array(CompactMember) }),
    async execute(_input, ctx) {
      const me = await membershipOf(ctx.db.sql, ctx.sessionId);
      return { agents: (await listMembers(ctx.db.sql, me.teamId)).map(compactMember) };
    },
  });
