import { z } from "zod";

// The session log's event vocabulary. Rows read back are parsed with these schemas, so a
// malformed row fails loudly instead of corrupting a model history.

export const MessageSourceSchema = z.discriminatedUnion("kind", [
  /** A person's prompt: their id and display name (the model sees the name). */
  z.object({
    kind: z.literal("human"),
    userId: z.string().optional(),
    name: z.string().optional(),
    /** The W3C traceparent of the request that sent it, when tracing is on (server/http/tracing.ts). */
    traceparent: z.string().max(64).optional(),
    /** Sent by this routine of the person's on its schedule (routines/runner.ts). */
    routine: z.object({ id: z.string(), name: z.string() }).optional(),
  }),
  /** Team mail keeps its mailbox message id and the real sender (team/mailbox.ts delivers it). */
  z.object({
    kind: z.literal("team"),
    teamId: z.string(),
    messageId: z.string(),
    senderSessionId: z.string(),
    senderName: z.string(),
  }),
  z.object({ kind: z.literal("runtime_context") }),
  z.object({ kind: z.literal("compaction_summary") }),
  z.object({ kind: z.literal("system") }),
]);
export type MessageSource = z.infer<typeof MessageSourceSchema>;

/** `budget`: the team's budget was reached at a step boundary (SPEC.md §15); the work resumes when it is raised. */
export const TurnEndReasonSchema = z.enum(["completed", "aborted", "error", "interrupted", "budget"]);
export type TurnEndReason = z.infer<typeof TurnEndReasonSchema>;

const ToolCallSchema = z.object({
  toolCallId: z.string(),
  toolName: z.string(),
  input: z.unknown(),
});

/**
 * Tokens as the provider reported them. `cachedInputTokens` is the part of the input served
 * from the provider's prompt cache (included in inputTokens); absent (older rows, providers that do not say) means 0.
 */
export const UsageSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cachedInputTokens: z.number().optional(),
  /** No usage came from the provider (a reply cut off): counted from the text, about 4 characters a token. */
  estimated: z.boolean().optional(),
});

export const EventPayloadSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("turn_start"), turnId: z.string() }),
  z.object({
    kind: z.literal("turn_end"),
    turnId: z.string(),
    reason: TurnEndReasonSchema,
    error: z.string().optional(),
  }),
  z.object({ kind: z.literal("step_start"), turnId: z.string(), step: z.number().int() }),
  z.object({ kind: z.literal("step_end"), turnId: z.string(), step: z.number().int() }),
  z.object({
    kind: z.literal("user_message"),
    messageId: z.string(),
    text: z.string(),
    source: MessageSourceSchema,
  }),
  /** Streamed text, flushed in small batches so a reload (or a crash) keeps what was shown. */
  z.object({ kind: z.literal("assistant_delta"), turnId: z.string(), step: z.number().int(), text: z.string() }),
  z.object({
    kind: z.literal("assistant_message"),
    messageId: z.string(),
    turnId: z.string(),
    step: z.number().int(),
    model: z.string(),
    text: z.string(),
    toolCalls: z.array(ToolCallSchema),
    usage: UsageSchema,
    /** What the step cost in nano-USD (1e-9 $) at the price table of its time (models/catalog.ts); absent means 0. */
    costNanos: z.number().int().nonnegative().optional(),
    interrupted: z.boolean(),
  }),
  /**
   * The step is waiting before its model request: for a free slot at the provider (the
   * process-wide cap) or before retrying a transient failure. Transcript only; not history.
   */
  z.object({
    kind: z.literal("model_wait"),
    turnId: z.string(),
    step: z.number().int(),
    wait: z.discriminatedUnion("kind", [
      z.object({ kind: z.literal("provider") }),
      z.object({ kind: z.literal("retry"), attempt: z.number().int().positive(), delayMs: z.number().int().nonnegative(), reason: z.string() }),
    ]),
  }),
  z.object({
    kind: z.literal("tool_result"),
    turnId: z.string(),
    toolCallId: z.string(),
    toolName: z.string(),
    output: z.unknown(),
    isError: z.boolean(),
    errorCode: z.string().optional(),
  }),
  /** Everything up to `throughSeq` is replaced in the model history by the summary message that follows. */
  z.object({
    kind: z.literal("compaction"),
    throughSeq: z.number().int(),
    summaryMessageId: z.string(),
    /** What the summary call used and cost (added to the session's spend like a step). */
    usage: UsageSchema.optional(),
    costNanos: z.number().int().nonnegative().optional(),
  }),
]);
export type EventPayload = z.infer<typeof EventPayloadSchema>;
export type EventKind = EventPayload["kind"];
export type PayloadOf<K extends EventKind> = Extract<EventPayload, { kind: K }>;

export const SessionEventSchema = z.object({
  seq: z.number().int().positive(),
  createdAt: z.date(),
  payload: EventPayloadSchema,
});
export type SessionEvent = z.infer<typeof SessionEventSchema>;
