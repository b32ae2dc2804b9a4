import { z } from "zod";
import { LIMITS } from "../../../shared/limits";
import { TurnEndReasonSchema } from "../../runtime/events";
import { AuthorSchema } from "../../workspace";
import { TeamMessageStateSchema } from "../mailbox";
import { ChangedBySchema, TaskActionSchema, TaskStatusSchema } from "../task-board";

// What the timeline returns: its entries, the filter a reader gives, a page.

export const TimelineKindSchema = z.enum(["turn", "tool", "prompt", "message", "task", "file"]);
export type TimelineKind = z.infer<typeof TimelineKindSchema>;

/** A task change: `create`, or the board action the change made. */
export const TaskChangeSchema = z.enum(["create", ...TaskActionSchema.options]);

const Common = {
  /** Stable across reads: a reconnect or an overlapping page replaces, never doubles, it. */
  id: z.string(),
  /** Sorts entries (plain string order): created_at, then the source, then its position. */
  order: z.string(),
  at: z.date(),
  /** The member whose work it is (`lead` or a teammate); null when a person acted outside any agent. */
  member: z.string().nullable(),
  /** The moment in that member's transcript (an event seq); null when none holds it. */
  seq: z.number().int().nullable(),
};

export const TimelineEntrySchema = z.discriminatedUnion("kind", [
  z.object({
    ...Common,
    kind: z.literal("turn"),
    phase: z.enum(["start", "end"]),
    reason: TurnEndReasonSchema.nullable(),
    error: z.string().nullable(),
  }),
  z.object({ ...Common, kind: z.literal("tool"), toolName: z.string(), ok: z.boolean(), errorCode: z.string().nullable() }),
  z.object({
    ...Common,
    kind: z.literal("prompt"),
    by: z.object({ id: z.string().nullable(), name: z.string() }).nullable(),
    /** The prompt's beginning (LIMITS.timelineExcerptChars). */
    text: z.string(),
  }),
  z.object({
    ...Common,
    kind: z.literal("message"),
    messageId: z.string(),
    /** The target's name (`member` is the sender). */
    to: z.string(),
    state: TeamMessageStateSchema,
    text: z.string(),
  }),
  z.object({
    ...Common,
    kind: z.literal("task"),
    taskId: z.string(),
    /** Null when the change's tool call could not be found (it is always there for a real result). */
    action: TaskChangeSchema.nullable(),
    /** The task after the change (from the tool's result); for people's changes the current subject only. */
    subject: z.string().nullable(),
    status: TaskStatusSchema.nullable(),
    revision: z.number().int().nullable(),
    ownerName: z.string().nullable(),
    by: ChangedBySchema,
  }),
  /** A new version of a workspace file (a deletion too); it links to that version, not a transcript. */
  z.object({
    ...Common,
    kind: z.literal("file"),
    path: z.string(),
    version: z.number().int(),
    deleted: z.boolean(),
    bytes: z.number().int(),
    by: AuthorSchema,
    taskIds: z.array(z.string()),
    warnings: z.array(z.string()),
  }),
]);
export type TimelineEntry = z.infer<typeof TimelineEntrySchema>;

export const TimelineFilterSchema = z.object({
  /** Only entries of these members (a message: of its sender or target); people's board and file changes drop out. */
  members: z.array(z.string().min(1).max(LIMITS.memberNameChars)).min(1).max(64).optional(),
  kinds: z.array(TimelineKindSchema).min(1).optional(),
});
export type TimelineFilter = z.infer<typeof TimelineFilterSchema>;

export const TimelinePageSchema = z.object({
  /** Oldest first. */
  entries: z.array(TimelineEntrySchema),
  /** Where the next earlier page starts; null when nothing is earlier. */
  earlier: z.string().nullable(),
});
export type TimelinePage = z.infer<typeof TimelinePageSchema>;
