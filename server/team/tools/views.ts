import { z } from "zod";
import { MemberViewSchema, type MemberView } from "../roster";
import { TaskViewSchema, type TaskView } from "../task-board";

// What the tools return: compact JSON, only what a model needs to decide its next step.

export const CompactMember = MemberViewSchema.pick({
  name: true,
  role: true,
  status: true,
  description: true,
  context: true,
  diagnostic: true,
});

export function compactMember(m: MemberView): z.infer<typeof CompactMember> {
  return CompactMember.parse(m);
}

export const CompactTask = TaskViewSchema.omit({ createdAt: true, updatedAt: true });

export function compactTask(t: TaskView): z.infer<typeof CompactTask> {
  return CompactTask.parse(t);
}
