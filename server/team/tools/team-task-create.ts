import { z } from "zod";
import { defineTool } from "../../runtime/tools";
import { membershipOf } from "../../members/membership";
import { createTask, CreateTaskRequestSchema } from "../task-board";
import type { TeamToolDeps } from "./deps";
import { CompactTask, compactTask } from "./views";

const C = CreateTaskRequestSchema.shape;

export const TASK_CREATE_TOOL = "team_task_create";

export const teamTaskCreateTool = (deps: TeamToolDeps) =>
  defineTool({
    name: TASK_CREATE_TOOL,
    description: "Creates a task on the team board. Use disjoint write_scopes (path prefixes) for parallel work.",
    input: z
      .object({ subject: C.subject, description: C.description, blocked_by: C.blockedBy, write_scopes: C.writeScopes })
      .strict(),
    output: CompactTask,
    async execute(input, ctx) {
      const me = await membershipOf(ctx.db.sql, ctx.sessionId);
      const task = { subject: input.subject, description: input.description, blockedBy: input.blocked_by, writeScopes: input.write_scopes };
      return ctx.commit(async (tx) => compactTask(await createTask(tx, me, task, deps.limits)));
    },
  });
