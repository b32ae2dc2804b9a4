import { initTRPC, TRPCError } from "@trpc/server";
import superjson from "superjson";
import { ZodError, z } from "zod";
import type { Db } from "../db/client";
import { isTransientDbError } from "../db/errors";
import type { Env } from "../env";
import { AppError, ERROR_CODES, type AppErrorCode } from "../errors";
import { findUnstorableText } from "../../shared/input-guard";
import type { ActivityHub } from "../live/activity";
import type { Person } from "../people/person";
import type { Runtime } from "../runtime/runtime";

// The one initTRPC of the app. Domain code throws AppError; the middleware below turns it into
// a TRPCError with the matching HTTP-ish code, and the formatter exposes the stable app code.

export interface TrpcContext {
  db: Db;
  env: Env;
  hub: ActivityHub;
  runtime: Runtime;
  /** The signed-in person (session cookie or API token); null when anonymous. */
  person: Person | null;
  /** The request's trace as a W3C traceparent, when tracing is on (a prompt carries it to its turn). */
  traceparent?: () => string | undefined;
}

/** Stack traces and internal messages in error responses only while developing. */
const isDev = process.env.NODE_ENV === "development";

/** Whether the error says the database is away for a moment (answered 503 with Retry-After). */
export const isUnavailable = (error: TRPCError): boolean => appCodeOf(error) === "UNAVAILABLE";

/** The stable app code of any error response: ours, zod's, or one for tRPC's own refusals. */
function appCodeOf(error: TRPCError): AppErrorCode {
  const cause = error.cause;
  if (cause instanceof AppError) return cause.code;
  if (cause instanceof ZodError) return "INVALID_INPUT";
  // The database away (in a procedure, a feed, or the credential lookup of the request's context).
  if (isTransientDbError(cause)) return "UNAVAILABLE";
  if (error.code === "INTERNAL_SERVER_ERROR") return "INTERNAL";
  if (error.code === "BAD_REQUEST" && /^batch call exceeds/i.test(error.message)) return "BATCH_TOO_LARGE";
  if (error.code === "NOT_FOUND") return "PROCEDURE_NOT_FOUND";
  return "INVALID_INPUT";
}

const t = initTRPC.context<TrpcContext>().create({
  // Dates (event times) arrive as Dates in the browser.
  transformer: superjson,
  isDev,
  sse: {
    ping: { enabled: true, intervalMs: 10_000 },
    client: { reconnectAfterInactivityMs: 25_000 },
  },
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    const appCode = appCodeOf(error);
    // An unexpected failure (a database error, a bug) says nothing of the server's insides.
    const hidden = appCode === "INTERNAL" && !isDev;
    const { stack: _stack, ...data } = shape.data;
    const unavailable = appCode === "UNAVAILABLE" && !(cause instanceof AppError);
    return {
      ...shape,
      message: hidden ? "Internal error; the details are in the server log" : unavailable ? "The database is unreachable for a moment: retry shortly" : shape.message,
      data: {
        ...(isDev ? shape.data : data),
        ...(unavailable ? { code: "SERVICE_UNAVAILABLE" as const, httpStatus: 503 } : {}),
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

/**
 * Text Postgres cannot store (NUL, lone surrogates) is refused for every procedure and feed,
 * before its own input schema runs, with INVALID_INPUT.
 */
const storableText = t.middleware(async ({ getRawInput, next }) => {
  const problem = findUnstorableText(await getRawInput());
  if (problem) throw new AppError("INVALID_INPUT", `Invalid input: ${problem}`);
  return next();
});

/** Everything but the instance status and an invite's preview needs a signed-in person. */
const signedIn = t.middleware(({ ctx, next }) => {
  if (!ctx.person) throw new AppError("UNAUTHORIZED", "Sign in first");
  return next({ ctx: { ...ctx, person: ctx.person } });
});

export const router = t.router;
export const publicProcedure = t.procedure.use(appErrors).use(storableText);
/** A procedure for signed-in people; which team data they may touch is checked by trpc/access.ts. */
export const personProcedure = publicProcedure.use(signedIn);
export type PersonContext = TrpcContext & { person: Person };
/**
 * Account and instance management, from a browser session only: a leaked API token must not
 * mint tokens that outlive it, nor change who may sign up.
 */
export const sessionProcedure = personProcedure.use(({ ctx, next }) => {
  if (ctx.person.credential?.kind === "token") throw new AppError("FORBIDDEN", "Manage API tokens and settings from a signed-in browser");
  return next();
});
/** What only the instance's owner does (its settings, its shared memory), from a browser session. */
export const instanceOwnerProcedure = sessionProcedure.use(({ ctx, next }) => {
  if (!ctx.person.instanceOwner) throw new AppError("FORBIDDEN", "Only the instance's owner does this");
  return next();
});
export const createCallerFactory = t.createCallerFactory;
