import { createCallerFactory, router } from "./init";
import { accountRouter } from "./routers/account";
import { approvalsRouter } from "./routers/approvals";
import { auditRouter } from "./routers/audit";
import { mcpServersRouter } from "./routers/mcp-servers";
import { memoryRouter } from "./routers/memory";
import { routinesRouter } from "./routers/routines";
import { notificationsRouter } from "./routers/notifications";
import { peopleRouter } from "./routers/people";
import { sessionRouter } from "./routers/session";
import { teamRouter } from "./routers/team";
import { timelineRouter } from "./routers/timeline";
import { webhooksRouter } from "./routers/webhooks";
import { workspaceRouter } from "./routers/workspace";

// Composes the routers by area; nothing else lives here.
export const appRouter = router({
  account: accountRouter,
  approvals: approvalsRouter,
  audit: auditRouter,
  mcpServers: mcpServersRouter,
  memory: memoryRouter,
  routines: routinesRouter,
  notifications: notificationsRouter,
  people: peopleRouter,
  session: sessionRouter,
  team: teamRouter,
  timeline: timelineRouter,
  webhooks: webhooksRouter,
  workspace: workspaceRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
