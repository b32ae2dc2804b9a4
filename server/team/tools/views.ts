import { z } from "zod";
import type { MemberView } from "../roster";
import { TaskViewSchema, type TaskView } from "../task-board";

// What the tools return: compact JSON, only what a model needs to decide its next step.

export const CompactMember = z.object({
  name: z.string(),
  role: z.enum(["lead", "teammate"]),
  status: z.string(),
  description: z.string(),
  context: z.enum(["fresh", "fork"]).nullable(),
  diagnostic: z.string().nullable(),
});

export function compactMember(m: MemberView): z.infer<typeof CompactMember> {
  return { name: m.name, role: m.role, status: m.status, description: m.description, context: m.context, diagnostic: m.diagnostic };
}

export const CompactTask = TaskViewSchema.omit({ createdAt: true, updatedAt: true });

export function compactTask(t: TaskView): z.infer<typeof CompactTask> {
  return CompactTask.parse(t);
}
