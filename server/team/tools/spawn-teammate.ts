import { isTransientDbError } from "../../db/errors";
import { type ModelOption } from "../../models/catalog";
import { modelKey, priceText } from "../../../shared/model-text";
import { defineTool } from "../../runtime/tools";
import { membershipOf } from "../../members/membership";
import { listMembers } from "../roster";
import { completeProvisioning, memberByToolCall, provisionOrReport, reserveTeammate, SpawnInputSchema } from "../provisioning";
import type { TeamToolDeps } from "./deps";
import { CompactMember, compactMember } from "./views";

// Multi-transaction: the reservation (with this call's key) commits first, then the child
// and `active` commit together with the tool_result. `recover` finishes a reservation a
// crash left behind and reports the member as it then is.

/** The same text for every member of every team on this server (the tool list is per server). */
function offeredModels(models: readonly ModelOption[]): string {
  if (models.length === 0) return "only your own model is offered";
  return `one of ${models.map((m) => `"${modelKey(m)}" (${m.label}; ${priceText(m.price)})`).join(", ")}`;
}

export const spawnTeammateTool = (deps: TeamToolDeps) =>
  defineTool({
    name: "spawn_teammate",
    description: `Lead only. Creates a teammate with a unique kebab-case name and gives it its first task (prompt). context: fresh (empty history) or fork (starts with your completed turns). model (optional, default: your own model): ${offeredModels(deps.models)}.`,
    input: SpawnInputSchema.strict(),
    output: CompactMember,
    async execute(input, ctx) {
      const me = await membershipOf(ctx.db.sql, ctx.sessionId);
      const name = await reserveTeammate(ctx.db, me, input, { limits: deps.limits, models: deps.models, tool: { callKey: ctx.callKey, fence: ctx.fence } });
      await ctx.effectCommitted();
      try {
        // Finishing the spawn and reporting it are one transaction.
        const complete = () => ctx.commit((tx) => completeProvisioning(tx, me.teamId, name));
        return compactMember(await provisionOrReport(ctx.db, me.teamId, name, complete));
      } catch (e) {
        // The database went away mid-spawn: the member stays provisioning and recovery
        // finishes it; say so rather than "failed".
        if (!isTransientDbError(e)) throw e;
        const view = (await listMembers(ctx.db.sql, me.teamId)).find((m) => m.name === name);
        if (!view) throw e;
        return { ...compactMember(view), diagnostic: "Provisioning was cut short; it finishes automatically." };
      }
    },
    async recover(callKey, scope) {
      const member = await memberByToolCall(scope.db, callKey);
      if (!member) return null;
      const view = await provisionOrReport(scope.db, member.teamId, member.name, () =>
        completeProvisioning(scope.db, member.teamId, member.name),
      );
      return compactMember(view);
    },
  });
