import { z } from "zod";
import { AppError } from "../../errors";
import { LIMITS } from "../../../shared/limits";
import { requestAbort } from "../../runtime/sessions";
import { defineTool } from "../../runtime/tools";
import { membershipOf, resolveActiveMember } from "../../members/membership";
import { LEAD_NAME } from "../../members/names";
import { listMembers } from "../roster";

// One transaction: the stored abort request commits with the tool_result.

export const interruptAgentTool = () =>
  defineTool({
    name: "interrupt_agent",
    description:
      "Lead only. Cancels a teammate's current turn. Its pending messages stay parked until its next message arrives.",
    input: z.object({ target: z.string().min(1).max(LIMITS.memberNameChars) }).strict(),
    output: z.object({ previousStatus: z.string() }),
    async execute({ target }, ctx) {
      const me = await membershipOf(ctx.db.sql, ctx.sessionId);
      if (!me.isLead) throw new AppError("TEAM_LEAD_REQUIRED", "Only the Lead can interrupt teammates");
      if (target === LEAD_NAME) throw new AppError("TEAM_INVALID_TARGET", "interrupt_agent takes a teammate, not the Lead");
      const to = await resolveActiveMember(ctx.db, me.teamId, target, "message");
      return ctx.commit(async (tx) => {
        const previous = (await listMembers(tx, me.teamId)).find((m) => m.name === target);
        await requestAbort(tx, to.sessionId, "interrupt");
        return { previousStatus: previous?.status ?? "inactive" };
      });
    },
  });
