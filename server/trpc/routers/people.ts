import { z } from "zod";
import { LIMITS } from "../../../shared/limits";
import { AppError } from "../../errors";
import { asSessionId, asUserId } from "../../ids";
import { PresenceClientId, PresenceWhereSchema, updatePresence } from "../../team/presence";
import { listPeople, removePerson, setRole, TeamPersonViewSchema } from "../../people/team-people";
import { acceptInvite, createInvite, INVITE_DEFAULT_HOURS, INVITE_MAX_HOURS, inviteInfo, InviteInfoSchema, InviteRoleSchema, InviteTokenSchema, InviteViewSchema, listInvites, revokeInvite } from "../../people/invites";
import { TeamRoleSchema } from "../../people/roles";
import { teamAccess } from "../access";
import { personProcedure, publicProcedure, router } from "../init";
import { SessionIdInput, TeamRef } from "../schemas";

// People in a team (docs/SPEC.md §13): the list, roles, invite links, leaving, and the
// presence heartbeat. Managing people needs the owner role; anyone in the team sees the list.

const UserIdInput = z.string().min(1).max(64).transform(asUserId);

export const peopleRouter = router({
  list: personProcedure
    .input(TeamRef)
    .output(z.array(TeamPersonViewSchema))
    .query(async ({ ctx, input }) => {
      const access = await teamAccess(ctx, input.teamId, "view");
      return listPeople(ctx.db, access.teamId, access);
    }),

  /** Open invite links (owners only: a link is a key to the team). */
  invites: personProcedure
    .input(TeamRef)
    .output(z.array(InviteViewSchema))
    .query(async ({ ctx, input }) => listInvites(ctx.db, (await teamAccess(ctx, input.teamId, "own")).teamId)),

  /** A new invite link; its secret is in the answer only (stored as a hash). */
  invite: personProcedure
    .input(
      TeamRef.extend({
        role: InviteRoleSchema,
        expiresInHours: z.number().int().min(1).max(INVITE_MAX_HOURS).default(INVITE_DEFAULT_HOURS),
        /** How many people the link lets in (a class joining at once); one by default. */
        maxUses: z.number().int().min(1).max(LIMITS.inviteMaxUses).default(1),
      }),
    )
    .output(InviteViewSchema.extend({ token: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const { teamId } = await teamAccess(ctx, input.teamId, "own");
      return createInvite(ctx.db, ctx.person, teamId, input);
    }),

  revokeInvite: personProcedure
    .input(TeamRef.extend({ inviteId: z.string().min(1).max(64) }))
    .output(z.object({ revoked: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      const { teamId } = await teamAccess(ctx, input.teamId, "own");
      await revokeInvite(ctx.db, ctx.person, teamId, input.inviteId);
      return { revoked: true as const };
    }),

  /** What a link offers, before signing in or up: the team's title, the role, who invited. */
  inviteInfo: publicProcedure
    .input(z.object({ token: InviteTokenSchema }))
    .output(InviteInfoSchema)
    .query(({ ctx, input }) => inviteInfo(ctx.db, input.token, ctx.person?.id)),

  accept: personProcedure
    .input(z.object({ token: InviteTokenSchema }))
    .output(z.object({ teamId: z.string(), role: TeamRoleSchema }))
    .mutation(({ ctx, input }) => acceptInvite(ctx.db, ctx.person, input.token)),

  setRole: personProcedure
    .input(TeamRef.extend({ userId: UserIdInput, role: TeamRoleSchema }))
    .output(TeamPersonViewSchema)
    .mutation(async ({ ctx, input }) => {
      const { teamId } = await teamAccess(ctx, input.teamId, "own");
      return setRole(ctx.db, ctx.person, teamId, input.userId, input.role);
    }),

  remove: personProcedure
    .input(TeamRef.extend({ userId: UserIdInput }))
    .output(z.object({ removed: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      const { teamId } = await teamAccess(ctx, input.teamId, "own");
      await removePerson(ctx.db, ctx.person, teamId, input.userId);
      return { removed: true as const };
    }),

  /** Anyone may leave a team, except its last owner. */
  leave: personProcedure
    .input(TeamRef)
    .output(z.object({ left: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      const { teamId } = await teamAccess(ctx, input.teamId, "view");
      await removePerson(ctx.db, ctx.person, teamId, ctx.person.id);
      return { left: true as const };
    }),

  /**
   * The tab's heartbeat: which agent the person is looking at and typing to. Watching is not
   * acting, so viewers send it too; a viewer cannot be typing (they have no prompt box).
   */
  presence: personProcedure
    .input(
      TeamRef.extend({
        clientId: PresenceClientId,
        watching: SessionIdInput.nullable(),
        typingTo: SessionIdInput.nullable(),
        // Tabs of an older page send none of these: the agent view, nothing edited.
        place: PresenceWhereSchema.shape.place.default("agent"),
        file: PresenceWhereSchema.shape.file.default(null),
        editing: PresenceWhereSchema.shape.editing.default(null),
      }),
    )
    .output(z.object({ ok: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      const { teamId, role } = await teamAccess(ctx, input.teamId, "view");
      // The room shows these: only sessions of this team (any other id is as unknown as a
      // missing one, so nothing about other teams is revealed).
      const named = [...new Set([input.watching, input.typingTo].filter((id) => id !== null))];
      if (named.length > 0 && (await ctx.db.session.count({ where: { id: { in: named }, teamId } })) !== named.length) {
        throw new AppError("SESSION_NOT_FOUND", "The watched session is not one of this team's", { teamId });
      }
      await updatePresence(ctx.db, teamId, ctx.person.id, {
        clientId: input.clientId,
        watching: input.watching ? asSessionId(input.watching) : null,
        typingTo: role === "viewer" || !input.typingTo ? null : asSessionId(input.typingTo),
        place: input.place,
        file: input.file,
        // Viewers edit nothing.
        editing: role === "viewer" ? null : input.editing,
      });
      return { ok: true as const };
    }),
});
