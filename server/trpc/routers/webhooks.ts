import { z } from "zod";
import { addWebhook, listWebhooks, removeWebhook, WebhookInputSchema, WebhookViewSchema } from "../../team/webhooks";
import { teamAccess } from "../access";
import { personProcedure, router } from "../init";
import { TeamRef } from "../schemas";

// A team's webhooks (SPEC.md §17): owners only, as they name endpoints outside the product and
// hold their secrets. The secret is in the answer that adds a webhook, never again.

const WebhookRef = TeamRef.extend({ webhookId: z.string().min(1).max(64) });

export const webhooksRouter = router({
  /** The team's webhooks, each with its newest deliveries and their status. */
  list: personProcedure
    .input(TeamRef)
    .output(z.array(WebhookViewSchema))
    .query(async ({ ctx, input }) => listWebhooks(ctx.db, (await teamAccess(ctx, input.teamId, "own")).teamId)),

  add: personProcedure
    .input(TeamRef.extend(WebhookInputSchema.shape))
    .output(z.object({ webhook: WebhookViewSchema, secret: z.string() }))
    .mutation(async ({ ctx, input }) => addWebhook(ctx.db, await teamAccess(ctx, input.teamId, "own"), { url: input.url, events: input.events })),

  remove: personProcedure
    .input(WebhookRef)
    .output(z.object({ ok: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      await removeWebhook(ctx.db, await teamAccess(ctx, input.teamId, "own"), input.webhookId);
      return { ok: true as const };
    }),
});
