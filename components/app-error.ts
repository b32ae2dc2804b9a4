import type { ApiError, AppErrorCode } from "./api-types";

// The one place the UI reads what went wrong with a call: the stable app code the server's
// error formatter adds (server/errors.ts), never the message text.

/** The app code of a failed call, or null when there is none (the request never got an answer). */
export function appCodeOf(error: Pick<ApiError, "data"> | null | undefined): AppErrorCode | null {
  return error?.data?.appCode ?? null;
}
