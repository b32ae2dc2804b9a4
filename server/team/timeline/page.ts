import { z } from "zod";
import type { DbOrTx } from "../../db/client";
import { Prisma } from "../../db/generated/client";
import type { SessionId } from "../../ids";
import { INT4_MAX } from "../../../shared/input-guard";
import { LIMITS } from "../../../shared/limits";
import { teamMemberRefs, type MemberRef } from "../../members/membership";
import { actionEntries, readActions } from "./actions";
import { encodeCursor, type TimelineCursor } from "./cursor";
import { readOlderFiles } from "./files";
import { mailEntries, readMail } from "./mail";
import type { TimelineFilter, TimelinePage } from "./schema";
import { readSessionEvents, sessionLists } from "./session-events";
import { ACTIONS, FILES, MAIL, plan, type Listed, type Sourced } from "./sources";

const HeadRow = z.array(z.object({ m: z.number().int(), a: z.bigint() }));

/** The mailbox's and the action record's newest positions for the team. */
async function heads(db: DbOrTx, teamId: SessionId): Promise<{ m: number; a: number }> {
  const [row] = HeadRow.parse(
    await db.$queryRaw`SELECT
      (SELECT coalesce(max(seq), 0) FROM team_messages WHERE team_id = ${teamId}) AS m,
      (SELECT coalesce(max(id), 0)::bigint FROM person_actions WHERE team_id = ${teamId}) AS a`,
  );
  return { m: row!.m, a: Number(row!.a) };
}

/**
 * The newest `limit` entries before `before` (or the newest of all), oldest first, with the
 * cursor of the page before them and the sources' heads (where a live reader goes on from).
 */
export async function newestPage(
  db: DbOrTx,
  teamId: SessionId,
  refs: readonly MemberRef[],
  filter: TimelineFilter,
  before: TimelineCursor | null,
  limit: number,
) {
  const t = Date.now();
  const p = plan(refs, filter);
  const sessionBounds = new Map(p.sessions.map((s) => [s.sessionId as string, before ? (before.s[s.sessionId] ?? 0) : INT4_MAX]));
  const mailBound = before ? before.m : INT4_MAX;
  const actionBound = before ? before.a : Number.MAX_SAFE_INTEGER;
  const fileBound = before ? before.w : INT4_MAX;
  const [events, mail, actions, files, head] = await Promise.all([
    readSessionEvents(db, p, sessionBounds, "older", limit),
    readMail(db, teamId, p, Prisma.sql`m.seq < ${mailBound}`, Prisma.sql`m.seq DESC`, limit),
    readActions(db, teamId, p, Prisma.sql`id < ${actionBound}`, Prisma.sql`id DESC`, limit),
    p.files ? readOlderFiles(db, teamId, p, fileBound, limit) : null,
    heads(db, teamId),
  ]);
  const { lists, lastSeq } = sessionLists(p, events, limit);
  if (p.mail) lists.push({ source: MAIL, rows: await mailEntries(db, mail), exhausted: mail.length < limit });
  if (p.actions) lists.push({ source: ACTIONS, rows: await actionEntries(db, teamId, actions), exhausted: actions.length < limit });
  if (files) lists.push({ source: FILES, rows: files.rows, exhausted: files.exhausted, floor: files.floor });

  // k-way merge from the newest: each source gives up a suffix of what it holds.
  const at = lists.map(() => 0);
  const taken: Sourced[] = [];
  while (taken.length < limit) {
    let best = -1;
    for (let i = 0; i < lists.length; i++) {
      const row = lists[i]!.rows[at[i]!];
      if (row && (best < 0 || row.entry.order > lists[best]!.rows[at[best]!]!.entry.order)) best = i;
    }
    if (best < 0) break;
    taken.push(lists[best]!.rows[at[best]!]!);
    at[best]!++;
  }

  // The next page's bound per source: below what was taken; where it was when nothing was.
  const boundOf = (l: Listed, i: number, old: number): number => {
    if (at[i]! > 0) return l.rows[at[i]! - 1]!.pos;
    if (l.rows.length > 0) return Math.min(old, l.rows[0]!.pos + 1);
    return l.exhausted ? 0 : (l.floor ?? old);
  };
  const earlier: TimelineCursor = { s: {}, m: 0, a: 0, w: 0, t: 0 };
  lists.forEach((l, i) => {
    if (l.source === MAIL) earlier.m = boundOf(l, i, mailBound);
    else if (l.source === ACTIONS) earlier.a = boundOf(l, i, actionBound);
    else if (l.source === FILES) earlier.w = boundOf(l, i, fileBound);
    else earlier.s[l.source.slice(1)] = boundOf(l, i, sessionBounds.get(l.source.slice(1)) ?? 0);
  });
  const more = lists.some((l, i) => !l.exhausted || at[i]! < l.rows.length);

  const live: TimelineCursor = { s: Object.fromEntries(lastSeq), m: head.m, a: head.a, w: files?.newest ?? 0, t };
  return { taken: taken.reverse(), earlier: more ? earlier : null, live };
}

/** The newest entries before `before` (the room opens with the newest page). */
export async function timelinePage(
  db: DbOrTx,
  teamId: SessionId,
  opts: { before?: TimelineCursor; limit?: number; filter?: TimelineFilter } = {},
): Promise<TimelinePage> {
  const refs = await teamMemberRefs(db, teamId);
  const page = await newestPage(db, teamId, refs, opts.filter ?? {}, opts.before ?? null, pageLimit(opts.limit));
  return { entries: page.taken.map((t) => t.entry), earlier: page.earlier && encodeCursor(page.earlier) };
}

function pageLimit(limit: number | undefined): number {
  return Math.min(LIMITS.timelinePageMax, Math.max(1, Math.floor(limit ?? LIMITS.timelinePageDefault)));
}
