import { z } from "zod";
import type { Db } from "../db/client";
import type { SqlTx } from "../db/sql";
import { notifyPeople } from "../people/notifications";
import { TeamEventDataSchema, type TeamEventData } from "../runtime/team-events";
import { Kickable } from "./kickable";
import { enqueueDeliveries } from "./webhooks";

// Fans the team-event outbox out (SPEC.md §17): each undispatched event becomes the
// notifications of the team's people who want it and the deliveries of the team's webhooks that
// want it, and is marked dispatched, in one transaction
// — so every event is fanned out exactly once, whichever process takes it (rows are claimed
// with SKIP LOCKED, so processes share the work without waiting on each other).

const EventRows = z.array(
  z.object({ id: z.bigint(), team_id: z.string(), data: z.unknown(), created_at: z.date(), team_title: z.string().nullable() }),
);
const PeopleRows = z.array(z.object({ user_id: z.string(), role: z.string() }));

const SKIP_REASONS = {
  missed: "Its time passed while the server was down, and it skips missed times.",
  overlap: "Its previous run was still working, and it skips overlapping runs.",
  owner_left: "Its owner can no longer prompt this team; it is paused until someone edits or resumes it.",
} as const;

/** Who of a team's people hears of an event: deciders for requests, the named for mentions, everyone else for the rest. */
function recipients(data: TeamEventData, people: { user_id: string; role: string }[]): string[] {
  if (data.kind === "approval.requested" || data.kind === "question.asked" || data.kind === "plan.proposed" || data.kind === "memory.proposed") return people.filter((p) => p.role !== "viewer").map((p) => p.user_id);
  if (data.kind === "mention") return people.filter((p) => data.userIds.includes(p.user_id)).map((p) => p.user_id);
  if (data.kind === "routine.skipped") return people.filter((p) => p.user_id === data.ownerId).map((p) => p.user_id);
  return people.map((p) => p.user_id);
}

/** A notification's two lines. */
export function notificationText(data: TeamEventData, team: string): { title: string; body: string } {
  switch (data.kind) {
    case "approval.requested":
      return { title: `${data.member} asks to run ${data.toolName}`, body: `In ${team}: approve or deny.` };
    case "question.asked":
      return { title: `${data.member} asks: ${data.question}`, body: `In ${team}.` };
    case "plan.proposed":
      return { title: `The Lead of ${team} proposes a plan`, body: "Its tasks wait until a member or owner approves it, or asks for a revision." };
    case "team.finished":
      return { title: `${team}: the Lead answered`, body: data.text };
    case "agent.failed":
      return { title: `${data.member} failed in ${team}`, body: data.error };
    case "budget.reached": {
      const why = data.needTokens !== undefined && data.leftTokens !== undefined ? `The next step needs about ${tokenText(data.needTokens)}; ${tokenText(Math.max(0, data.leftTokens))} left. ` : "";
      return { title: `${team} reached its budget`, body: `${why}Its agents are paused until the budget is raised.` };
    }
    case "mention":
      return { title: `${data.by} mentioned you in ${team}`, body: `${data.where}: ${data.text}` };
    case "memory.proposed":
      return { title: `${data.by} proposes a memory for ${team}`, body: data.text };
    case "routine.skipped":
      return { title: `Routine "${data.name}" did not run in ${team}`, body: SKIP_REASONS[data.reason] };
  }
}

const tokenText = (n: number) => `${n.toLocaleString("en-US")} tokens`;

const BATCH = 100;

/** One batch of the outbox, fanned out; how many events it took. */
export async function dispatchTeamEvents(db: Db, limit = BATCH): Promise<number> {
  return db.sqlTx(async (tx) => {
    const events = EventRows.parse(
      await tx.$queryRaw`SELECT e.id, e.team_id, e.data, e.created_at, (SELECT title FROM sessions WHERE id = e.team_id) AS team_title
        FROM team_events e WHERE e.dispatched_at IS NULL ORDER BY e.id LIMIT ${limit} FOR UPDATE OF e SKIP LOCKED`,
    );
    for (const e of events) {
      const data = TeamEventDataSchema.parse(e.data);
      await fanOut(tx, e.id, e.team_id, e.team_title ?? "a team", data);
      await enqueueDeliveries(tx, e.id, e.team_id, data, e.created_at);
    }
    if (events.length > 0) await tx.$executeRaw`UPDATE team_events SET dispatched_at = now() WHERE id = ANY(${events.map((e) => e.id)}::bigint[])`;
    return events.length;
  });
}

async function fanOut(tx: SqlTx, eventId: bigint, teamId: string, team: string, data: TeamEventData): Promise<void> {
  const people = PeopleRows.parse(await tx.$queryRaw`SELECT user_id, role FROM team_people WHERE team_id = ${teamId}`);
  const approvalId = data.kind === "approval.requested" || data.kind === "question.asked" ? data.approvalId : null;
  const memoryId = data.kind === "memory.proposed" ? data.memoryId : null;
  await notifyPeople(tx, recipients(data, people), { eventId, teamId, kind: data.kind, approvalId, memoryId, ...notificationText(data, team) });
}

/** The dispatcher of a process: kicked when an event commits, and on every sweep. */
export function createDispatcher(db: Db, log: (line: string) => void): Kickable {
  return new Kickable("team events: dispatch failed", async () => (await dispatchTeamEvents(db)) === BATCH, log);
}
