import type { ServerResponse } from "node:http";
import { TRPCError } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { isTransientDbError } from "../db/errors";
import { AppError, ERROR_CODES, isAppError } from "../errors";

// How a request that failed is answered outside tRPC (downloads, the auth library's routes):
// the error's status and stable code as JSON, 503 with Retry-After while the database is away.

/** What a client waits before retrying a request the database's absence refused. */
export const RETRY_AFTER_SECONDS = 5;

/** The AppError an unexpected failure shows: UNAVAILABLE while the database is unreachable, else INTERNAL. */
export function unexpectedFailure(e: unknown, message: string): AppError {
  if (isTransientDbError(e)) return new AppError("UNAVAILABLE", "The database is unreachable for a moment: retry shortly");
  return new AppError("INTERNAL", message);
}

/**
 * Answers a request whose handler threw: a refusal as itself, anything else logged and shown as
 * `unexpected` (or UNAVAILABLE); a response already under way is cut, never completed wrongly.
 */
export function answerFailure(res: ServerResponse, e: unknown, where: string, log: (line: string) => void, unexpected: string): void {
  if (res.headersSent) {
    log(`[${where}] broke off: ${e instanceof Error ? e.message : String(e)}`);
    return void res.destroy();
  }
  if (isAppError(e)) return sendFailure(res, e);
  log(`[${where}] failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  sendFailure(res, unexpectedFailure(e, unexpected));
}

export function sendFailure(res: ServerResponse, e: AppError): void {
  res.statusCode = getHTTPStatusCodeFromError(new TRPCError({ code: ERROR_CODES[e.code] }));
  if (e.code === "UNAVAILABLE") res.setHeader("Retry-After", String(RETRY_AFTER_SECONDS));
  res.setHeader("Content-Type", "application/json");
  res.end(JSON.stringify({ error: { code: e.code, message: e.message } }));
}
