import { initTRPC, TRPCError } from "@trpc/server";
import superjson from "superjson";
import { ZodError, z } from "zod";
import type { Db } from "../db/client";
import type { Env } from "../env";
import { AppError, ERROR_CODES } from "../errors";
import type { ActivityHub } from "../live/activity";
import type { Runtime } from "../runtime/runtime";

// The one initTRPC of the app. Domain code throws AppError; the middleware below turns it into
// a TRPCError with the matching HTTP-ish code, and the formatter exposes the stable app code.

export interface TrpcContext {
  db: Db;
  env: Env;
  hub: ActivityHub;
  runtime: Runtime;
}

const t = initTRPC.context<TrpcContext>().create({
  // Dates (event times) arrive as Dates in the browser.
  transformer: superjson,
  sse: {
    ping: { enabled: true, intervalMs: 10_000 },
    client: { reconnectAfterInactivityMs: 25_000 },
  },
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    const appCode =
      cause instanceof AppError ? cause.code : cause instanceof ZodError ? "INVALID_INPUT" : undefined;
    return {
      ...shape,
      data: {
        ...shape.data,
        appCode,
        details: cause instanceof AppError ? (cause.details ?? null) : null,
        zodError: cause instanceof ZodError ? z.flattenError(cause) : null,
      },
    };
  },
});

const appErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof AppError) {
    const cause = result.error.cause;
    return { ...result, error: new TRPCError({ code: ERROR_CODES[cause.code], message: cause.message, cause }) };
  }
  return result;
});

export const router = t.router;
export const publicProcedure = t.procedure.use(appErrors);
export const createCallerFactory = t.createCallerFactory;
