import { createCallerFactory, router } from "./init";
import { sessionRouter } from "./routers/session";
import { teamRouter } from "./routers/team";

// Composes the routers by area; nothing else lives here.
export const appRouter = router({
  session: sessionRouter,
  team: teamRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
