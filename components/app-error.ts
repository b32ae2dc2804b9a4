import type { ApiError, AppErrorCode } from "./api-types";

// The one place the UI reads what went wrong with a call: the stable app code the server's
// error formatter adds (server/errors.ts), never the message text.

/** The app code of a failed call, or null when there is none (the request never got an answer). */
export function appCodeOf(error: Pick<ApiError, "data"> | null | undefined): AppErrorCode | null {
  return error?.data?.appCode ?? null;
}

/**
 * A refusal that means the person cannot see this team any more: removed from it (the team
 * and its sessions no longer exist for them) or signed out. Retrying would not help.
 */
const ACCESS_LOST: ReadonlySet<AppErrorCode> = new Set<AppErrorCode>(["UNAUTHORIZED", "TEAM_NOT_FOUND", "SESSION_NOT_FOUND"]);

export function accessLost(error: Pick<ApiError, "data"> | null | undefined): boolean {
  const code = appCodeOf(error);
  return code !== null && ACCESS_LOST.has(code);
}

/**
 * Whether a live feed that failed is opened again (resuming from its last event id): when the
 * app gave no answer (the server away, a proxy's 503 for it) or said its database is away for a
 * moment (UNAVAILABLE). An internal failure never comes
 * here: tRPC's event-stream link reconnects after one itself. Any other refusal (access lost,
 * bad input) would come again, so it shows.
 */
export function feedRetries(error: Pick<ApiError, "data"> | null | undefined): boolean {
  const code = appCodeOf(error);
  return code === null || code === "UNAVAILABLE";
}

/** The wait before the attempt after `attempt` failed ones: doubling from 500 ms, at most 5 s. */
export function retryDelayMs(attempt: number): number {
  return Math.min(500 * 2 ** attempt, 5_000);
}
