import { z } from "zod";
import { addMcpServer, checkMcpServer, listMcpServers, McpServerInputSchema, McpServerViewSchema, removeMcpServer } from "../../mcp/servers";
import { readMcpServersFile } from "../../mcp/config-file";
import { teamAccess } from "../access";
import { personProcedure, router } from "../init";
import { TeamRef } from "../schemas";

// A team's MCP servers (SPEC.md §18): everyone in the team sees each server's health and tools;
// owners add, remove and test them and see their URLs. Secrets go in, never out.

const ServerRef = TeamRef.extend({ serverId: z.string().min(1).max(64) });

export const mcpServersRouter = router({
  list: personProcedure
    .input(TeamRef)
    .output(z.array(McpServerViewSchema))
    .query(async ({ ctx, input }) => {
      const access = await teamAccess(ctx, input.teamId, "view");
      const configured = readMcpServersFile(ctx.env.MCP_SERVERS_FILE).map((c) => c.name);
      return listMcpServers(ctx.db, access.teamId, { owner: access.role === "owner", configured });
    }),

  /** Adds the server and connects to it at once, so the answer shows its health and tools. */
  add: personProcedure
    .input(TeamRef.extend(McpServerInputSchema.shape))
    .output(McpServerViewSchema)
    .mutation(async ({ ctx, input }) => {
      const { teamId: _teamId, ...server } = input;
      const by = await teamAccess(ctx, input.teamId, "own");
      const configured = readMcpServersFile(ctx.env.MCP_SERVERS_FILE).map((c) => c.name);
      const added = await addMcpServer(ctx.db, by, server, ctx.env.MCP_SECRETS_KEY, configured);
      return checkMcpServer(ctx.db, by.teamId, added.id, ctx.env.MCP_SECRETS_KEY);
    }),

  remove: personProcedure
    .input(ServerRef)
    .output(z.object({ ok: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      await removeMcpServer(ctx.db, await teamAccess(ctx, input.teamId, "own"), input.serverId);
      return { ok: true as const };
    }),

  /** Connects now and lists the server's tools; the health the room shows is this answer. */
  test: personProcedure
    .input(ServerRef)
    .output(McpServerViewSchema)
    .mutation(async ({ ctx, input }) => checkMcpServer(ctx.db, (await teamAccess(ctx, input.teamId, "own")).teamId, input.serverId, ctx.env.MCP_SECRETS_KEY)),
});
