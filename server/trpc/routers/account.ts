import { z } from "zod";
import { LIMITS } from "../../../shared/limits";
import { ApiTokenViewSchema, createApiToken, listApiTokens, revokeAllApiTokens, revokeApiToken } from "../../people/api-tokens";
import { instanceStatus, InstanceStatusSchema, privateWebhooksAllowed, setOpenSignUp, setPrivateWebhooksAllowed } from "../../people/instance";
import { ssoConfigOf } from "../../people/sso";
import { instanceToolDefaults, setInstanceToolDefault, ToolModeSchema } from "../../team/tool-policy";
import { instanceOwnerProcedure, publicProcedure, router, sessionProcedure } from "../init";

// The person's own account beside what Better Auth serves under /api/auth (sign-up, sign-in,
// sign-out, password, display name): who am I, API tokens, and the instance's settings.

const MeSchema = z.object({ id: z.string(), name: z.string(), email: z.string(), instanceOwner: z.boolean() });

export const accountRouter = router({
  /** Open to anyone: a fresh instance's page asks for the owner account. */
  status: publicProcedure
    .output(InstanceStatusSchema.extend({ me: MeSchema.nullable(), sso: z.object({ name: z.string() }).nullable() }))
    .query(async ({ ctx }) => {
      const status = await instanceStatus(ctx.db);
      const p = ctx.person;
      const sso = ssoConfigOf(ctx.env);
      return { ...status, me: p ? { id: p.id, name: p.name, email: p.email, instanceOwner: p.instanceOwner } : null, sso: sso && { name: sso.name } };
    }),

  /** The instance owner opens (or closes) sign-up to anyone. */
  setOpenSignUp: instanceOwnerProcedure
    .input(z.object({ open: z.boolean() }))
    .output(InstanceStatusSchema)
    .mutation(({ ctx, input }) => {
      return setOpenSignUp(ctx.db, input.open);
    }),

  /** The instance's settings only its owner sees. */
  instanceSettings: instanceOwnerProcedure.output(z.object({ webhooksPrivateOk: z.boolean() })).query(async ({ ctx }) => {
    return { webhooksPrivateOk: await privateWebhooksAllowed(ctx.db) };
  }),

  /** The instance owner lets webhooks reach private addresses (a receiver on the same network), or not. */
  setWebhooksPrivateOk: instanceOwnerProcedure
    .input(z.object({ allowed: z.boolean() }))
    .output(z.object({ webhooksPrivateOk: z.boolean() }))
    .mutation(async ({ ctx, input }) => {
      return { webhooksPrivateOk: await setPrivateWebhooksAllowed(ctx.db, input.allowed) };
    }),

  /** The tool policy new teams start with (the instance owner's). */
  toolDefaults: instanceOwnerProcedure.output(z.array(z.object({ tool: z.string(), mode: ToolModeSchema }))).query(({ ctx }) => {
    return instanceToolDefaults(ctx.db.sql, ctx.runtime.toolNames());
  }),

  setToolDefault: instanceOwnerProcedure
    .input(z.object({ tool: z.string().min(1).max(LIMITS.toolNameChars), mode: ToolModeSchema }))
    .output(z.object({ ok: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      await setInstanceToolDefault(ctx.db.sql, ctx.person, ctx.runtime.toolNames(), input.tool, input.mode);
      return { ok: true as const };
    }),

  tokens: sessionProcedure.output(z.array(ApiTokenViewSchema)).query(({ ctx }) => listApiTokens(ctx.db, ctx.person.id)),

  /** A new API token: the secret is in this answer only. */
  createToken: sessionProcedure
    .input(z.object({ name: z.string().trim().min(1).max(LIMITS.tokenNameChars) }))
    .output(ApiTokenViewSchema.extend({ token: z.string() }))
    .mutation(({ ctx, input }) => createApiToken(ctx.db, ctx.person.id, input.name)),

  revokeToken: sessionProcedure
    .input(z.object({ id: z.string().min(1).max(64) }))
    .output(z.object({ revoked: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      await revokeApiToken(ctx.db, ctx.person.id, input.id);
      return { revoked: true as const };
    }),

  /** Every API token of the person ends (the password change page offers it). */
  revokeAllTokens: sessionProcedure
    .output(z.object({ revoked: z.number().int() }))
    .mutation(async ({ ctx }) => ({ revoked: await revokeAllApiTokens(ctx.db, ctx.person.id) })),
});
