import { TRPCError } from "@trpc/server";
import { BatchedSql, type SqlRunner } from "../db/sql";
import { AppError, ERROR_CODES } from "../errors";
import type { SessionId } from "../ids";
import type { HumanActor } from "../people/actions";
import { credentialHolds } from "../people/person";
import type { Need } from "../people/roles";
import { authorize, type TeamAccess } from "../people/team-people";
import type { PersonContext } from "./init";

// The one access check of every team-scoped procedure and feed (docs/SPEC.md §13): the team
// the named data belongs to, and the person's role in it.

export type Access = TeamAccess & HumanActor;

/** What the check reads: a procedure's context, or a plain HTTP route's (downloads). */
export type AccessContext = Pick<PersonContext, "db" | "person">;

/** Any session id (a Lead's or a teammate's) resolves to its team. */
export async function sessionAccess(ctx: AccessContext, sessionId: SessionId, need: Need, db: SqlRunner = ctx.db.sql): Promise<Access> {
  const access = await authorize(db, ctx.person, sessionId, need, () => sessionNotFound(sessionId));
  return { ...access, person: ctx.person };
}

/** A team id must name the team itself (its Lead's session): a teammate's id is no team id. */
export async function teamAccess(ctx: AccessContext, teamId: SessionId, need: Need, db: SqlRunner = ctx.db.sql): Promise<Access> {
  const access = await authorize(db, ctx.person, teamId, need, () => teamNotFound(teamId), { teamOnly: true });
  return { ...access, person: ctx.person };
}

const sessionNotFound = (sessionId: SessionId) => new AppError("SESSION_NOT_FOUND", `Session ${sessionId} not found`, { sessionId });
const teamNotFound = (teamId: SessionId) => new AppError("TEAM_NOT_FOUND", `No team ${teamId}`, { teamId });

/**
 * A live feed re-checks access before every read: the person's sign-in still holds (sign-out
 * everywhere, a revoked token) and their role in the team (`check`, reading through `db`), both
 * in one round trip and one commit. A sign-in that no longer holds is the refusal, whatever
 * the role check says. Inside a feed's generator an AppError would reach the client as
 * INTERNAL_SERVER_ERROR, so the refusal is thrown as a TRPCError that keeps the AppError as its
 * cause (and so its app code).
 */
export async function feedAccess(ctx: PersonContext, check: (db: SqlRunner) => Promise<Access>): Promise<Access> {
  const reads = new BatchedSql(ctx.db.sql);
  const [held, access] = await Promise.allSettled([credentialHolds(reads, ctx.person), check(reads)]);
  try {
    if (held.status === "rejected") throw held.reason;
    if (!held.value) throw signedOut();
    if (access.status === "rejected") throw access.reason;
    return access.value;
  } catch (e) {
    throw feedError(e);
  }
}

/** feedAccess for a feed of the person's own (their notifications): only the sign-in is checked. */
export async function feedSignedIn(ctx: PersonContext): Promise<void> {
  try {
    if (!(await credentialHolds(ctx.db.sql, ctx.person))) throw signedOut();
  } catch (e) {
    throw feedError(e);
  }
}

const signedOut = () => new AppError("UNAUTHORIZED", "Signed out: sign in again");

function feedError(e: unknown): unknown {
  return e instanceof AppError ? new TRPCError({ code: ERROR_CODES[e.code], message: e.message, cause: e }) : e;
}
