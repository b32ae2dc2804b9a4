import { z } from "zod";
import { Prisma } from "../db/generated/client";
import type { SqlRunner } from "../db/sql";
import { notifySql } from "../db/notify";
import type { SessionId, TurnId } from "../ids";

// The team-event outbox (SPEC.md §17): what happened in a team that its people (notifications)
// and other systems (webhooks) are told of. Each row is written in the transaction of what it
// reports, so it exists exactly when that committed; its dedupe key makes a writer that runs
// twice (a recovery, a retried commit) record it once. team/dispatch.ts fans each row out once.

export const TEAM_EVENT_KINDS = ["approval.requested", "question.asked", "plan.proposed", "team.finished", "agent.failed", "budget.reached", "mention", "memory.proposed", "routine.skipped"] as const;
export const TeamEventKindSchema = z.enum(TEAM_EVENT_KINDS);
export type TeamEventKind = z.infer<typeof TeamEventKindSchema>;

/** What each kind carries. `member`: the agent's name ("lead" for the Lead). */
export const TeamEventDataSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("approval.requested"), approvalId: z.string(), member: z.string(), toolName: z.string() }),
  z.object({ kind: z.literal("question.asked"), approvalId: z.string(), member: z.string(), question: z.string() }),
  z.object({ kind: z.literal("plan.proposed"), planId: z.string() }),
  z.object({ kind: z.literal("team.finished"), member: z.string(), text: z.string() }),
  z.object({ kind: z.literal("agent.failed"), member: z.string(), error: z.string() }),
  // `need`: the least the step that did not fit needed; `left`: what the budget had left then (tokens).
  z.object({ kind: z.literal("budget.reached"), needTokens: z.number().optional(), leftTokens: z.number().optional() }),
  z.object({ kind: z.literal("mention"), userIds: z.array(z.string()), by: z.string(), where: z.string(), text: z.string() }),
  // `by`: the member (or person) who proposed it; `text`: the memory, cut for the line.
  z.object({ kind: z.literal("memory.proposed"), memoryId: z.string(), by: z.string(), text: z.string() }),
  // A routine's time that did not run (routines/runner.ts): told to the routine's owner.
  z.object({ kind: z.literal("routine.skipped"), routineId: z.string(), name: z.string(), ownerId: z.string(), reason: z.enum(["missed", "overlap", "owner_left"]) }),
]);
export type TeamEventData = z.infer<typeof TeamEventDataSchema>;

/** The dispatcher's wake-up key (live/activity.ts): a team event committed. */
export const TEAM_EVENTS_KEY = "team-events";

/** A text cut to `max` characters for an event (a notification's line, not the whole reply). */
export function excerpt(text: string, max = 280): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** Records a team-level event in the caller's transaction (with the dispatcher's wake-up, sent when it commits). */
export async function recordTeamEvent(tx: SqlRunner, teamId: string, key: string, data: TeamEventData): Promise<void> {
  await tx.$queryRaw`${insertEvent(Prisma.sql`SELECT ${teamId}::text AS team_id, NULL::text AS member`, key, data)}`;
}

/**
 * An agent's event as one statement (for a batch, or the caller's transaction): its team and
 * name (`member`) read from the session row; nothing is recorded for a session outside any team,
 * or unless `when` holds.
 */
export function agentEventStatement(sessionId: SessionId, key: string, data: TeamEventData, when: Prisma.Sql = Prisma.sql`true`): Prisma.Sql {
  return insertEvent(
    Prisma.sql`SELECT team_id, COALESCE(member_name, 'lead') AS member FROM sessions WHERE id = ${sessionId} AND team_id IS NOT NULL AND (${when})`,
    key,
    data,
  );
}

function insertEvent(source: Prisma.Sql, key: string, data: TeamEventData): Prisma.Sql {
  return Prisma.sql`WITH e AS (
      INSERT INTO team_events (team_id, kind, dedupe_key, data)
      SELECT src.team_id, ${data.kind}, ${key},
        CASE WHEN src.member IS NULL THEN ${JSON.stringify(data)}::jsonb ELSE ${JSON.stringify(data)}::jsonb || jsonb_build_object('member', src.member) END
      FROM (${source}) src
      ON CONFLICT (dedupe_key) DO NOTHING
      RETURNING id
    )
    SELECT count(*)::int AS n FROM (SELECT ${notifySql(TEAM_EVENTS_KEY, "outbox")} FROM e) told`;
}

/**
 * A turn's end, told to people when it matters: a Lead's completed turn (the team answered),
 * any member's failed one. In the turn end's own transaction; `when` is the condition under
 * which the turn_end was appended (a completion that a steer extended records nothing).
 */
export function turnEndEvent(
  sessionId: SessionId,
  turnId: TurnId,
  end: { reason: "completed"; text: string } | { reason: "error"; error: string },
  when: Prisma.Sql = Prisma.sql`true`,
): Prisma.Sql {
  if (end.reason === "error") return agentEventStatement(sessionId, `turn:${turnId}`, { kind: "agent.failed", member: "", error: excerpt(end.error) }, when);
  return agentEventStatement(sessionId, `turn:${turnId}`, { kind: "team.finished", member: "lead", text: excerpt(end.text) }, Prisma.sql`member_name IS NULL AND (${when})`);
}
