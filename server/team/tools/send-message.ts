import { z } from "zod";
import { LIMITS } from "../../../shared/limits";
import { defineTool } from "../../runtime/tools";
import { sendMessage, sendResultOfToolCall } from "../mailbox";
import { assertActiveMember, membershipOf, resolveActiveMember } from "../../members/membership";
import type { TeamToolDeps } from "./deps";

// Multi-transaction: the queued row (with this call's key) commits, then delivery. `recover`
// reads the row back, so a crash in between reports the real message id and status.

export const SEND_MESSAGE_TOOL = "send_message";

export const sendMessageTool = (deps: TeamToolDeps) =>
  defineTool({
    name: SEND_MESSAGE_TOOL,
    description:
      "Sends a message to a teammate by name, or to `lead`. It reaches a running agent at its next step, starts an idle one and resumes an inactive one. accepted: it is in their inbox; queued: it will be delivered. Either way it is durable: never resend.",
    input: z.object({ target: z.string().min(1).max(LIMITS.memberNameChars), message: z.string().min(1) }).strict(),
    output: z.object({ messageId: z.string(), status: z.enum(["accepted", "queued"]) }),
    async execute({ target, message }, ctx) {
      const me = await membershipOf(ctx.db.sql, ctx.sessionId);
      await assertActiveMember(ctx.db, me);
      const to = await resolveActiveMember(ctx.db, me.teamId, target, "message");
      return sendMessage(
        ctx.db,
        { teamId: me.teamId, sender: me, target: to, content: message, toolCallKey: ctx.callKey, fence: ctx.fence },
        { ...deps.limits, afterQueued: () => ctx.effectCommitted() },
      );
    },
    recover: (callKey, scope) => sendResultOfToolCall(scope.db, callKey, deps.limits),
  });
