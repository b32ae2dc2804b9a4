import { z } from "zod";
import { defineTool } from "../../runtime/tools";
import { membershipOf } from "../../members/membership";
import { getTask } from "../task-board";
import { CompactTask, compactTask } from "./views";
import { TaskIdSchema } from "../../task-ids";

export const teamTaskGetTool = () =>
  defineTool({
    name: "team_task_get",
    description: "Reads one task (deleted tasks too).",
    input: z.object({ task_id: TaskIdSchema }).strict(),
    output: CompactTask,
    async execute({ task_id }, ctx) {
      const me = await membershipOf(ctx.db.sql, ctx.sessionId);
      return compactTask(await getTask(ctx.db, me.teamId, task_id));
    },
  });
