import type { DbOrTx } from "../../db/client";
import { Prisma } from "../../db/generated/client";
import type { SessionId } from "../../ids";
import { LIMITS } from "../../../shared/limits";
import { listWorkspaceChanges } from "../../workspace";
import { teamMemberRefs, type MemberRef } from "../../members/membership";
import { actionEntries, readActions } from "./actions";
import { encodeCursor, type TimelineCursor } from "./cursor";
import { fileCounts, fileEntry } from "./files";
import { mailEntries, readMail } from "./mail";
import { newestPage } from "./page";
import type { TimelineEntry, TimelineFilter } from "./schema";
import { readSessionEvents, sessionLists } from "./session-events";
import { ACTIONS, MAIL, plan } from "./sources";

/**
 * How far back the live reader looks again for mailbox and action rows: their ids are taken
 * when the row is inserted, so a row can commit after a higher one was read, but never later
 * than a transaction may last (15 s, db/client.ts).
 */
export const TIMELINE_LOOKBACK_MS = 30_000;
/** Rows per source in one live read; a source that fills it is read again at once. */
const FEED_BATCH = 500;

/** What a live reader keeps between reads: where it is, and what it sent of recent rows. */
export interface TimelineFollower {
  cursor: TimelineCursor | null;
  /** Entry id → what was sent (a message's state), for the rows still inside the lookback. */
  sent: Map<string, string>;
}

/** What of an entry can change after it was sent: a message's state. */
const sentAs = (e: TimelineEntry) => (e.kind === "message" ? e.state : "");

export function newFollower(cursor: TimelineCursor | null): TimelineFollower {
  return { cursor, sent: new Map() };
}

export type TimelineRead =
  | { type: "page"; entries: TimelineEntry[]; earlier: string | null }
  | { type: "entries"; entries: TimelineEntry[]; more: boolean };

/**
 * One read of a live timeline: without a cursor the newest page (a fresh room), then what
 * committed since, and messages whose state changed. Updates `follower`. `refs` are the
 * team's members (teamMemberRefs; the feed reads them anyway to know whom to wait for).
 */
export async function followTimeline(
  db: DbOrTx,
  teamId: SessionId,
  filter: TimelineFilter,
  follower: TimelineFollower,
  refs?: readonly MemberRef[],
): Promise<TimelineRead> {
  refs ??= await teamMemberRefs(db, teamId);
  const cursor = follower.cursor;
  if (!cursor) {
    const page = await newestPage(db, teamId, refs, filter, null, LIMITS.timelinePageDefault);
    follower.cursor = page.live;
    // What the page holds of the mailbox and the record counts as sent.
    follower.sent = new Map(page.taken.filter((t) => t.source === MAIL || t.source === ACTIONS).map((t) => [t.entry.id, sentAs(t.entry)]));
    return { type: "page", entries: page.taken.map((t) => t.entry), earlier: page.earlier && encodeCursor(page.earlier) };
  }
  const now = Date.now();
  const since = new Date(cursor.t - TIMELINE_LOOKBACK_MS);
  const p = plan(refs, filter);
  const bounds = new Map(p.sessions.map((s) => [s.sessionId as string, cursor.s[s.sessionId] ?? 0]));
  const [events, newMail, recentMail, newActions, recentActions, files] = await Promise.all([
    readSessionEvents(db, p, bounds, "newer", FEED_BATCH),
    readMail(db, teamId, p, Prisma.sql`m.seq > ${cursor.m}`, Prisma.sql`m.seq`, FEED_BATCH),
    readMail(
      db,
      teamId,
      p,
      Prisma.sql`m.seq <= ${cursor.m} AND (m.created_at > ${since} OR m.delivered_at > ${since} OR m.consumed_at > ${since})`,
      Prisma.sql`m.seq`,
      FEED_BATCH,
    ),
    readActions(db, teamId, p, Prisma.sql`id > ${cursor.a}`, Prisma.sql`id`, FEED_BATCH),
    readActions(db, teamId, p, Prisma.sql`id <= ${cursor.a} AND created_at > ${since}`, Prisma.sql`id`, FEED_BATCH),
    // Change numbers are taken under the workspace's lock and commit in order: no lookback.
    p.files ? listWorkspaceChanges(db, teamId, { afterChange: cursor.w, limit: FEED_BATCH }) : [],
  ]);

  const next: TimelineCursor = { s: { ...cursor.s }, m: cursor.m, a: cursor.a, w: files.at(-1)?.change ?? cursor.w, t: now };
  const out: TimelineEntry[] = [];
  let more = false;
  const { lists, lastSeq } = sessionLists(p, events, FEED_BATCH);
  for (const l of lists) {
    const id = l.source.slice(1);
    out.push(...l.rows.map((r) => r.entry));
    const full = events.filter((r) => r.session_id === id && r.seq !== null).length === FEED_BATCH;
    more ||= full;
    const last = l.rows.at(-1)?.pos;
    next.s[id] = full && last !== undefined ? last : Math.max(cursor.s[id] ?? 0, lastSeq.get(id) ?? 0);
  }
  // Mailbox and action rows: new ones, and recent ones not sent yet or whose state changed.
  const recent = [...(await mailEntries(db, [...recentMail, ...newMail])), ...(await actionEntries(db, teamId, [...recentActions, ...newActions]))];
  const sent = new Map<string, string>();
  for (const r of recent) {
    const sig = sentAs(r.entry);
    sent.set(r.entry.id, sig);
    if (follower.sent.get(r.entry.id) !== sig) out.push(r.entry);
    if (r.source === MAIL) next.m = Math.max(next.m, r.pos);
    else next.a = Math.max(next.a, r.pos);
  }
  out.push(...files.filter(fileCounts(p)).map((c) => fileEntry(c).entry));
  more ||= newMail.length === FEED_BATCH || newActions.length === FEED_BATCH || files.length === FEED_BATCH;
  follower.sent = sent;
  follower.cursor = next;
  return { type: "entries", entries: out.sort((x, y) => (x.order < y.order ? -1 : x.order > y.order ? 1 : 0)), more };
}
