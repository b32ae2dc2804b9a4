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
