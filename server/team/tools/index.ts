import type { ToolDefinition, ToolsetOptions } from "../../runtime/tools";
import type { TeamToolDeps } from "./deps";
import { interruptAgentTool } from "./interrupt-agent";
import { listAgentsTool } from "./list-agents";
import { sendMessageTool } from "./send-message";
import { spawnTeammateTool } from "./spawn-teammate";
import { teamTaskCreateTool } from "./team-task-create";
import { teamTaskGetTool } from "./team-task-get";
import { teamTaskListTool } from "./team-task-list";
import { teamTaskUpdateTool } from "./team-task-update";
import { waitAgentTool } from "./wait-agent";

// The nine Team tools, one file each: the same list, byte for byte, for every member. Who is
// calling comes from the session running the tool, never from model input. Refusals are
// AppErrors with TEAM_* codes, which the runtime returns to the model as tool errors.
//
// Effectively once (runtime/tools.ts): task create/update and interrupt commit their effect
// with their result (`ctx.commit`); spawn_teammate and send_message store the call key with
// their first durable row and `recover` from it.

export type { TeamToolDeps } from "./deps";

export const TEAM_TOOLSET_OPTIONS: ToolsetOptions = { invalidInputCode: "TEAM_INVALID_ARGUMENT" };

export function createTeamTools(deps: TeamToolDeps): ToolDefinition[] {
  return [
    spawnTeammateTool(deps),
    sendMessageTool(deps),
    listAgentsTool(),
    waitAgentTool(deps),
    interruptAgentTool(),
    teamTaskCreateTool(deps),
    teamTaskListTool(),
    teamTaskGetTool(),
    teamTaskUpdateTool(),
  ];
}
