import { z } from "zod";
import { int4 } from "../../../shared/input-guard";
import { TaskIdSchema } from "../../task-ids";
import { LIMITS } from "../../../shared/limits";

// The board's contract: ids, statuses, actions, inputs and views. The one source for the
// domain functions, the team router (which extends the request schemas with the team id) and
// the team_task_* tools (which map their snake_case names onto them).

export const TaskStatusSchema = z.enum(["pending", "in_progress", "completed", "deleted"]);
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

export const TaskActionSchema = z.enum([
  "claim",
  "release",
  "edit",
  "set_dependencies",
  "complete",
  "reopen",
  "reassign",
  "delete",
]);
export type TaskAction = z.infer<typeof TaskActionSchema>;

/** Whom a task is reassigned to: a member name or `lead`; blank unassigns. */
export const OwnerNameSchema = z.string().max(LIMITS.memberNameChars);

// ---------------------------------------------------------------------------------------
// Inputs

export const CreateTaskInputSchema = z.object({
  subject: z.string(),
  description: z.string(),
  blockedBy: z.array(z.string()).optional(),
  writeScopes: z.array(z.string()).optional(),
});
export type CreateTaskInput = z.infer<typeof CreateTaskInputSchema>;

/** Flat on purpose (like the tool input): each action takes only its own fields. */
export const UpdateTaskInputSchema = z.object({
  taskId: z.string(),
  expectedRevision: int4(1),
  action: TaskActionSchema,
  /** edit */
  subject: z.string().optional(),
  /** edit */
  description: z.string().optional(),
  /** edit */
  writeScopes: z.array(z.string()).optional(),
  /** set_dependencies (required; replaces the edges) */
  blockedBy: z.array(z.string()).optional(),
  /** reassign: a member name or `lead`; blank or null unassigns */
  owner: OwnerNameSchema.nullable().optional(),
});
export type UpdateTaskInput = z.infer<typeof UpdateTaskInputSchema>;

export const ListTasksInputSchema = z.object({
  status: TaskStatusSchema.optional(),
  /** A member name, `lead`, or `unowned`. */
  owner: z.string().min(1).max(LIMITS.memberNameChars).optional(),
  ready: z.boolean().optional(),
  /** The id of the last task of the previous page (its `nextCursor`). */
  cursor: z.string().optional(),
  limit: z.number().int().min(1).max(LIMITS.taskListMax).optional(),
});
export type ListTasksInput = z.infer<typeof ListTasksInputSchema>;

/** The update as the router and the tools take it: ids must have the task-id shape. */
export const UpdateTaskRequestSchema = UpdateTaskInputSchema.extend({
  taskId: TaskIdSchema,
  blockedBy: z.array(TaskIdSchema).optional(),
});

export const CreateTaskRequestSchema = CreateTaskInputSchema.extend({
  blockedBy: z.array(TaskIdSchema).optional(),
});

// ---------------------------------------------------------------------------------------
// Views

export const TaskWarningSchema = z.object({
  code: z.literal("WRITE_SCOPE_OVERLAP"),
  /** The other, in-progress task. */
  taskId: z.string(),
  /** This task's scope. */
  scope: z.string(),
  /** The other task's overlapping scope. */
  otherScope: z.string(),
});
export type TaskWarning = z.infer<typeof TaskWarningSchema>;

/** Who made a task's last change: a member (an agent, or `lead`) or a person in the room. */
export const ChangedBySchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("member"), name: z.string() }),
  z.object({ kind: z.literal("person"), id: z.string(), name: z.string() }),
]);
export type ChangedBy = z.infer<typeof ChangedBySchema>;

export const TaskViewSchema = z.object({
  id: z.string(),
  revision: z.number().int(),
  subject: z.string(),
  description: z.string(),
  status: TaskStatusSchema,
  /** The owning session id (the team id for the Lead). */
  owner: z.string().nullable(),
  /** The owner's member name, or `lead`. */
  ownerName: z.string().nullable(),
  blockedBy: z.array(z.string()),
  writeScopes: z.array(z.string()),
  /** Pending and every blocker completed. */
  ready: z.boolean(),
  warnings: z.array(TaskWarningSchema),
  createdBy: z.string(),
  /** Null on rows from before this was recorded. */
  changedBy: ChangedBySchema.nullable(),
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type TaskView = z.infer<typeof TaskViewSchema>;

export const TaskPageSchema = z.object({ tasks: z.array(TaskViewSchema), nextCursor: z.string().optional() });
export type TaskPage = z.infer<typeof TaskPageSchema>;
