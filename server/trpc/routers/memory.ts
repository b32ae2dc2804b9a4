import { z } from "zod";
import { LIMITS } from "../../../shared/limits";
import { decideTeamMemory, deleteTeamMemory, editTeamMemory, memorySettingsOf, MemorySettingsSchema, setMemorySettings } from "../../memory/review";
import { listMemories, MemoryTagsSchema, MemoryTextSchema, MemoryVersionSchema, memoryVersions, MemoryViewSchema } from "../../memory/store";
import { teamAccess } from "../access";
import { instanceOwnerProcedure, personProcedure, router } from "../init";
import { deleteSharedMemory, editSharedMemory, shareMemory } from "../../memory/shared";
import { TeamRef } from "../schemas";

// A team's memory (SPEC.md §20): viewers read it; members decide proposals (approve, edit then
// approve, reject with a note; the first decision wins), edit and delete memories; owners set
// whether proposals are approved as they come and whether the team reads the shared memory.
// The instance's owner curates the shared memory: shares a team's memory into it, edits, deletes.

const SharedRef = z.object({ memoryId: z.string().min(1).max(64) });
const MemoryRef = TeamRef.merge(SharedRef);
const Edit = z.object({ text: MemoryTextSchema, tags: MemoryTagsSchema });
const Ok = z.object({ ok: z.literal(true) });

export const memoryRouter = router({
  /** The team's proposals waiting for a decision, or its approved memories; newest first. */
  list: personProcedure
    .input(TeamRef.extend({ status: z.enum(["proposed", "approved"]) }))
    .output(z.array(MemoryViewSchema))
    .query(async ({ ctx, input }) => listMemories(ctx.db.sql, (await teamAccess(ctx, input.teamId, "view")).teamId, input.status)),

  /** A memory's earlier texts, newest first. */
  versions: personProcedure
    .input(MemoryRef)
    .output(z.array(MemoryVersionSchema))
    .query(async ({ ctx, input }) => memoryVersions(ctx.db.sql, (await teamAccess(ctx, input.teamId, "view")).teamId, input.memoryId)),

  /** Approve (as proposed, or with `edit`) or reject with a note; MEMORY_CONFLICT when decided already. */
  decide: personProcedure
    .input(MemoryRef.extend({ approve: z.boolean(), note: z.string().trim().max(LIMITS.decisionNoteChars).optional(), edit: Edit.optional() }))
    .output(MemoryViewSchema)
    .mutation(async ({ ctx, input }) =>
      decideTeamMemory(ctx.db, await teamAccess(ctx, input.teamId, "act"), input.memoryId, { approve: input.approve, note: input.note || null, edit: input.edit ?? null }),
    ),

  edit: personProcedure
    .input(MemoryRef.merge(Edit))
    .output(MemoryViewSchema)
    .mutation(async ({ ctx, input }) => editTeamMemory(ctx.db, await teamAccess(ctx, input.teamId, "act"), input.memoryId, { text: input.text, tags: input.tags })),

  delete: personProcedure
    .input(MemoryRef)
    .output(Ok)
    .mutation(async ({ ctx, input }) => {
      await deleteTeamMemory(ctx.db, await teamAccess(ctx, input.teamId, "act"), input.memoryId);
      return { ok: true as const };
    }),

  settings: personProcedure
    .input(TeamRef)
    .output(MemorySettingsSchema)
    .query(async ({ ctx, input }) => memorySettingsOf(ctx.db, (await teamAccess(ctx, input.teamId, "view")).teamId)),

  /** Changes the settings given; the others stay. */
  setSettings: personProcedure
    .input(TeamRef.merge(MemorySettingsSchema.partial()))
    .output(Ok)
    .mutation(async ({ ctx, input }) => {
      const { teamId, ...settings } = input;
      await setMemorySettings(ctx.db, await teamAccess(ctx, teamId, "own"), settings);
      return { ok: true as const };
    }),

  /** The instance's shared memory, newest first: what every team that opts in lets its agents read. */
  sharedList: personProcedure.output(z.array(MemoryViewSchema)).query(({ ctx }) => listMemories(ctx.db.sql, null, "approved")),

  /** The instance's owner shares an approved memory of a team they see with every team that opts in. */
  share: instanceOwnerProcedure
    .input(MemoryRef)
    .output(MemoryViewSchema)
    .mutation(async ({ ctx, input }) => shareMemory(ctx.db, ctx.person, (await teamAccess(ctx, input.teamId, "view")).teamId, input.memoryId)),

  sharedEdit: instanceOwnerProcedure
    .input(SharedRef.merge(Edit))
    .output(MemoryViewSchema)
    .mutation(({ ctx, input }) => editSharedMemory(ctx.db, ctx.person, input.memoryId, { text: input.text, tags: input.tags })),

  sharedDelete: instanceOwnerProcedure
    .input(SharedRef)
    .output(Ok)
    .mutation(async ({ ctx, input }) => {
      await deleteSharedMemory(ctx.db, ctx.person, input.memoryId);
      return { ok: true as const };
    }),
});
