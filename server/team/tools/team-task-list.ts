import { z } from "zod";
import { defineTool } from "../../runtime/tools";
import { membershipOf } from "../../members/membership";
import { listTasks, ListTasksInputSchema } from "../task-board";
import { CompactTask, compactTask } from "./views";

export const teamTaskListTool = () =>
  defineTool({
    name: "team_task_list",
    description: "Lists tasks on the board, filtered by status, owner (a name or `unowned`) or readiness.",
    input: ListTasksInputSchema.strict(),
    output: z.object({ tasks: z.array(CompactTask), nextCursor: z.string().optional() }),
    async execute(input, ctx) {
      const me = await membershipOf(ctx.db.sql, ctx.sessionId);
      const page = await listTasks(ctx.db, me.teamId, input);
      return { tasks: page.tasks.map(compactTask), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
    },
  });
