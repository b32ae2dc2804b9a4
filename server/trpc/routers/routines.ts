import { z } from "zod";
import { nextTimes, ScheduleSchema } from "../../routines/schedule";
import {
  createRoutine,
  deleteRoutine,
  listRoutines,
  RoutineInputSchema,
  routineRuns,
  RoutineRunViewSchema,
  RoutineViewSchema,
  runRoutineNow,
  setRoutinePaused,
  updateRoutine,
} from "../../routines/store";
import { teamAccess } from "../access";
import { personProcedure, router } from "../init";
import { TeamRef } from "../schemas";

// A team's routines (SPEC.md §21): viewers see them and their runs; members and owners create,
// edit (and so own), pause, resume, run now and delete them. A schedule that does not parse is
// ROUTINE_INVALID_SCHEDULE naming the field.

const RoutineRef = TeamRef.extend({ routineId: z.string().min(1).max(64) });
const Ok = z.object({ ok: z.literal(true) });

export const routinesRouter = router({
  list: personProcedure
    .input(TeamRef)
    .output(z.array(RoutineViewSchema))
    .query(async ({ ctx, input }) => listRoutines(ctx.db, (await teamAccess(ctx, input.teamId, "view")).teamId)),

  /** A routine's runs, newest first, each with its prompt's turn state and its place in the Lead's transcript. */
  runs: personProcedure
    .input(RoutineRef)
    .output(z.array(RoutineRunViewSchema))
    .query(async ({ ctx, input }) => routineRuns(ctx.db, (await teamAccess(ctx, input.teamId, "view")).teamId, input.routineId)),

  /** The next five times of a schedule, to show before saving it. */
  preview: personProcedure
    .input(z.object({ schedule: ScheduleSchema }))
    .output(z.array(z.date()))
    .query(({ input }) => nextTimes(input.schedule, new Date(), 5)),

  create: personProcedure
    .input(TeamRef.merge(RoutineInputSchema))
    .output(RoutineViewSchema)
    .mutation(async ({ ctx, input }) => {
      const { teamId, ...routine } = input;
      return createRoutine(ctx.db, await teamAccess(ctx, teamId, "act"), routine);
    }),

  update: personProcedure
    .input(RoutineRef.merge(RoutineInputSchema))
    .output(RoutineViewSchema)
    .mutation(async ({ ctx, input }) => {
      const { teamId, routineId, ...routine } = input;
      return updateRoutine(ctx.db, await teamAccess(ctx, teamId, "act"), routineId, routine);
    }),

  setPaused: personProcedure
    .input(RoutineRef.extend({ paused: z.boolean() }))
    .output(RoutineViewSchema)
    .mutation(async ({ ctx, input }) => setRoutinePaused(ctx.db, await teamAccess(ctx, input.teamId, "act"), input.routineId, input.paused)),

  runNow: personProcedure
    .input(RoutineRef)
    .output(z.object({ itemId: z.string() }))
    .mutation(async ({ ctx, input }) => runRoutineNow(ctx.db, await teamAccess(ctx, input.teamId, "act"), input.routineId)),

  delete: personProcedure
    .input(RoutineRef)
    .output(Ok)
    .mutation(async ({ ctx, input }) => {
      await deleteRoutine(ctx.db, await teamAccess(ctx, input.teamId, "act"), input.routineId);
      return { ok: true as const };
    }),
});
