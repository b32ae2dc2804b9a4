import { z } from "zod";
import { defineTool } from "../../runtime/tools";
import { membershipOf } from "../../members/membership";
import { OwnerNameSchema, updateTask, UpdateTaskRequestSchema } from "../task-board";
import { CompactTask, compactTask } from "./views";

// The board's update request under snake_case names; the change commits with its result.

const U = UpdateTaskRequestSchema.shape;

export const TASK_UPDATE_TOOL = "team_task_update";

export const teamTaskUpdateTool = () =>
  defineTool({
    name: TASK_UPDATE_TOOL,
    description:
      "Changes a task. Send the revision you last saw as expected_revision; on TEAM_TASK_STALE_REVISION re-read the task and decide again. Actions: claim, release, edit (subject/description/write_scopes), set_dependencies (blocked_by), complete, reopen, reassign (Lead; owner), delete.",
    input: z
      .object({
        task_id: U.taskId,
        expected_revision: U.expectedRevision,
        action: U.action,
        subject: U.subject,
        description: U.description,
        write_scopes: U.writeScopes,
        blocked_by: U.blockedBy,
        owner: OwnerNameSchema.optional(),
      })
      .strict(),
    output: CompactTask,
    async execute(input, ctx) {
      const me = await membershipOf(ctx.db.sql, ctx.sessionId);
      const update = {
        taskId: input.task_id,
        expectedRevision: input.expected_revision,
        action: input.action,
        subject: input.subject,
        description: input.description,
        writeScopes: input.write_scopes,
        blockedBy: input.blocked_by,
        owner: input.owner,
      };
      return ctx.commit(async (tx) => compactTask(await updateTask(tx, me, update)));
    },
  });
