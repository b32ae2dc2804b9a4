// One error type with stable codes. tRPC maps it to a typed error (see server/trpc/init.ts);
// tools turn it into a tool error the model can read (see server/runtime/tools.ts).

export const ERROR_CODES = {
  SESSION_NOT_FOUND: "NOT_FOUND",
  QUEUE_ITEM_NOT_FOUND: "NOT_FOUND",
  STEER_UNAVAILABLE: "CONFLICT",
  INVALID_INPUT: "BAD_REQUEST",
  MODEL_UNAVAILABLE: "BAD_REQUEST",
  FORK_POINT_INVALID: "BAD_REQUEST",
  LEASE_LOST: "CONFLICT",
  TOOL_NOT_FOUND: "BAD_REQUEST",
  TOOL_INVALID_INPUT: "BAD_REQUEST",
  /** More calls in one HTTP batch than the server takes (MAX_BATCH_SIZE). */
  BATCH_TOO_LARGE: "BAD_REQUEST",
  /** A failure that is not the caller's: details stay in the server log. */
  INTERNAL: "INTERNAL_SERVER_ERROR",
  /** No procedure at the requested path. */
  PROCEDURE_NOT_FOUND: "NOT_FOUND",
  TEAM_NOT_FOUND: "NOT_FOUND",
  // Agent Teams (spec section 12).
  TEAM_LEAD_REQUIRED: "FORBIDDEN",
  TEAM_NOT_MEMBER: "FORBIDDEN",
  TEAM_INVALID_MEMBER_NAME: "BAD_REQUEST",
  TEAM_MEMBER_NAME_TAKEN: "CONFLICT",
  TEAM_MEMBER_LIMIT: "CONFLICT",
  TEAM_MEMBER_NOT_FOUND: "NOT_FOUND",
  TEAM_SELF_MESSAGE: "BAD_REQUEST",
  TEAM_MAILBOX_FULL: "TOO_MANY_REQUESTS",
  TEAM_MESSAGE_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  TEAM_INVALID_TARGET: "BAD_REQUEST",
  TEAM_INVALID_TIMEOUT: "BAD_REQUEST",
  TEAM_WAIT_ABORTED: "CLIENT_CLOSED_REQUEST",
  TEAM_INVALID_ARGUMENT: "BAD_REQUEST",
  TEAM_TASK_NOT_FOUND: "NOT_FOUND",
  TEAM_TASK_STALE_REVISION: "CONFLICT",
  TEAM_TASK_DELETED: "CONFLICT",
  TEAM_TASK_BLOCKED: "PRECONDITION_FAILED",
  TEAM_TASK_ALREADY_CLAIMED: "CONFLICT",
  TEAM_TASK_UNAUTHORIZED: "FORBIDDEN",
  TEAM_TASK_INVALID_TRANSITION: "PRECONDITION_FAILED",
  TEAM_TASK_HAS_DEPENDENTS: "PRECONDITION_FAILED",
  TEAM_TASK_DEPENDENCY_CYCLE: "BAD_REQUEST",
  TEAM_TASK_LIMIT: "CONFLICT",
  TEAM_INVALID_WRITE_SCOPE: "BAD_REQUEST",
  TEAM_PROVISIONING_CONFLICT: "CONFLICT",
} as const;

export type AppErrorCode = keyof typeof ERROR_CODES;
export type HttpishCode = (typeof ERROR_CODES)[AppErrorCode];

export class AppError extends Error {
  override readonly name = "AppError";
  constructor(
    readonly code: AppErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export function isAppError(e: unknown, code?: AppErrorCode): e is AppError {
  return e instanceof AppError && (code === undefined || e.code === code);
}
