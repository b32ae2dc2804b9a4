import type { Db } from "./db/client";
import { createRoutineRunner } from "./routines/runner";
import type { ActivityBus } from "./db/notify";
import type { SessionEvent } from "./runtime/events";
import type { ModelOption } from "./models/catalog";
import { ContextRegistry, dateContextProvider } from "./runtime/context-registry";
import type { RuntimeOptions } from "./runtime/runtime";
import { teamIdentityProvider } from "./team/identity";
import { TEAM_SYSTEM_PROMPT } from "./team/policy";
import { teamLimits, workspaceLimits, type TeamLimits, type WorkspaceLimits } from "../shared/limits";
import { createWorkspaceTools } from "./workspace/tools";
import { reserveStep } from "./team/budget";
import { consumedStatement, recoverMailbox } from "./team/mailbox";
import { recoverProvisioning } from "./team/provisioning";
import { createTeamTools, TEAM_TOOLSET_OPTIONS } from "./team/tools";
import { createAskHumansTool } from "./team/tools/ask-humans";
import { toolModesOfSession } from "./team/tool-policy";
import { tasksInProgressOf } from "./team/task-board";
import type { ToolDefinition } from "./runtime/tools";
import { expireRequests } from "./runtime/approvals";
import { TEAM_EVENTS_KEY } from "./runtime/team-events";
import { createDispatcher } from "./team/dispatch";
import { createWebhookSender } from "./team/webhook-sender";
import { WEBHOOKS_KEY } from "./team/webhooks";
import { createMcpToolset, type McpToolsetOptions } from "./mcp/toolset";
import { createMemoryTools } from "./memory/tools";
import { memoryContextProvider } from "./memory/context";

// Plugs Agent Teams into the generic runtime: the collaboration policy as the shared system
// prompt, the nine Team tools, the six Workspace tools, the two Memory tools and ask_humans for
// every member (under the team's tool policy; requests past the team's expiry end on every
// sweep), team identity as required runtime context and the relevant approved memories as
// optional context, mail consumption at claim time, the team budget, recovery of provisioning
// and undelivered mail on every sweep, the team events' fan-out (notifications), and the team's
// MCP servers' tools, read as each turn starts.

export interface TeamLayerOptions {
  limits?: Partial<TeamLimits>;
  workspaceLimits?: Partial<WorkspaceLimits>;
  /** The models this server offers (registry.availableModels): spawn_teammate lists them and may name one. */
  models?: readonly ModelOption[];
  /** Members younger than this are left alone by provisioning recovery (another process may be creating them). */
  provisioningGraceMs?: number;
  /** MCP servers' tools (mcp/toolset.ts): the key their secrets are encrypted with, the configured stdio servers. */
  mcp?: Omit<McpToolsetOptions, "log">;
  log?: (line: string) => void;
}

export type TeamLayer = Required<
  Pick<RuntimeOptions, "toolsFor" | "contextFor" | "onClaimed" | "reserveStep" | "onRecover" | "systemPrompt" | "toolModes" | "tasksInProgress" | "turnTools" | "recoveryTool" | "onStop">
>;

/** One list for every member: the nine Team tools, the six Workspace tools, the two Memory tools, then ask_humans. */
export function teamToolList(hub: ActivityBus<SessionEvent>, opts: TeamLayerOptions = {}): ToolDefinition[] {
  return [
    ...createTeamTools({ hub, limits: teamLimits(opts.limits), models: opts.models ?? [] }),
    ...createWorkspaceTools(workspaceLimits(opts.workspaceLimits)),
    ...createMemoryTools(),
    createAskHumansTool(),
  ];
}

export function createTeamLayer(db: Db, hub: ActivityBus<SessionEvent>, opts: TeamLayerOptions = {}): TeamLayer {
  const tools = teamToolList(hub, opts);
  const identity = teamIdentityProvider(db.sql);
  const memories = memoryContextProvider(db.sql);
  // Team events are fanned out as soon as one commits (its notification), and on every sweep.
  const log = opts.log ?? ((line: string) => console.error(line));
  const dispatcher = createDispatcher(db, log);
  const sender = createWebhookSender(db, log);
  const mcp = createMcpToolset(db, { secretsKey: undefined, ...opts.mcp, log });
  const routines = createRoutineRunner(db, log);
  hub.on(TEAM_EVENTS_KEY, (a) => {
    if (a.kind === "outbox") void dispatcher.kick();
  });
  hub.on(WEBHOOKS_KEY, (a) => {
    if (a.kind === "outbox") void sender.kick();
  });
  return {
    systemPrompt: TEAM_SYSTEM_PROMPT,
    toolsFor: () => ({ tools, options: TEAM_TOOLSET_OPTIONS }),
    contextFor: () => new ContextRegistry([dateContextProvider, identity, memories]),
    onClaimed: consumedStatement,
    reserveStep,
    toolModes: toolModesOfSession,
    turnTools: mcp.turnTools,
    recoveryTool: mcp.recoveryTool,
    tasksInProgress: tasksInProgressOf,
    onRecover: async () => {
      await recoverProvisioning(db, opts.provisioningGraceMs ?? 30_000);
      await recoverMailbox(db);
      await expireRequests(db);
      await dispatcher.kick();
      // Routines whose time came (exactly once per time, whichever process takes it); never
      // awaited, so a slow run delays no recovery.
      void routines.kick();
      // Deliveries due for a retry; never awaited, so a slow endpoint delays nothing.
      void sender.kick();
      // Configured stdio servers not running yet (started, or a failed one tried again).
      void mcp.connectConfigServers();
    },
    onStop: () => mcp.close(),
  };
}
