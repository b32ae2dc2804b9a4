import { createHash } from "node:crypto";
import type { Db } from "../db/client";
import { credentialsKey } from "../db/notify";
import type { SessionId, UserId } from "../ids";
import { teamMemberRefs, type MemberRef } from "../members/membership";
import { listNotifications } from "../people/notifications";
import type { TeamRole } from "../people/roles";
import type { SessionEvent } from "../runtime/events";
import { readEventsAfter } from "../runtime/session-log";
import { leavePresence } from "../team/presence";
import { encodeCursor, followTimeline, newFollower, type TimelineCursor, type TimelineEntry, type TimelineFilter, type TimelineFollower } from "../team/timeline";
import { filesAsOfNow, filesChangedAfter, type FilesMessage } from "../workspace";
import { activityWaiter, type ActivityHub } from "./activity";
import { FEED_BATCH, sessionFeedsOf, type SessionState } from "./session-feed";
import { teamFeedsOf, type FeedCursor, type TeamMessage } from "./team-feed";

// What each live feed reads (trpc/live-feed.ts runs the loop around it: access, waits, resume).
// A reader says where a cursor resumes, what follows it and what wakes it; the session and team
// readers read through their process-wide tails (session-feed.ts, team-feed.ts).

/** Something to wait for, subscribed before a read. */
export interface Wake {
  fired: Promise<unknown>;
  dispose(): void;
}

export interface FeedRead<C, M> {
  /** What to send, in order, each with the event id a reconnect sends back. */
  messages: { id: string; data: M }[];
  cursor: C;
  /** More is ready now: read again without waiting. */
  more?: boolean;
}

export interface FeedReader<C, A, M> {
  /** Where the feed starts: after the event id the client sent back on reconnect, or fresh. */
  start(): Promise<C>;
  /** Subscribes to what can change this feed's next read. */
  wake(): Wake | Promise<Wake>;
  /** What follows `cursor`, for a viewer with `access`. */
  read(cursor: C, access: A): Promise<FeedRead<C, M>>;
  /** Whether access must be checked again before this read (the people changed, say); asked before every read. */
  recheck?(): boolean;
  close?(): void | Promise<void>;
}

interface Live {
  db: Db;
  hub: ActivityHub;
}

/** A session's feed: batches of events (the id is the last one's seq), and its state when that changed. */
export type SessionLiveMessage = { type: "events"; events: SessionEvent[] } | { type: "state"; state: SessionState };

export function sessionReader({ db, hub }: Live, id: SessionId, lastEventId: string | null): FeedReader<{ after: number; state: string }, unknown, SessionLiveMessage> {
  const feeds = sessionFeedsOf(db, hub);
  const tail = feeds.acquire(id);
  return {
    start: async () => ({ after: lastEventId ? Number(lastEventId) : 0, state: "" }),
    wake: async () => {
      await tail.ready;
      return { fired: tail.changed(), dispose: () => undefined };
    },
    async read({ after, state }) {
      const messages: { id: string; data: SessionLiveMessage }[] = [];
      const events = tail.eventsAfter(after, FEED_BATCH) ?? (await readEventsAfter(db.sql, id, after, FEED_BATCH));
      const last = events.at(-1);
      if (last) messages.push({ id: String(last.seq), data: { type: "events", events } });
      const seq = last?.seq ?? after;
      const current = tail.state;
      if (current && current.key !== state) messages.push({ id: String(seq), data: { type: "state", state: current.state } });
      return { messages, cursor: { after: seq, state: current?.key ?? state }, more: events.length === FEED_BATCH };
    },
    close: () => feeds.release(tail),
  };
}

/**
 * A team's feed: what its tail sent this feed, for the viewer's role; access is checked again
 * whenever the team's people changed. `clientId` names the browser tab: it leaves the room when
 * the feed closes.
 */
export function teamReader({ db, hub }: Live, id: SessionId, lastEventId: string | null, who: { userId: UserId; clientId: string | null }): FeedReader<FeedCursor, TeamRole, TeamMessage> {
  const feeds = teamFeedsOf(db, hub);
  const tail = feeds.acquire(id);
  let peopleAt = -1;
  return {
    start: async () => {
      await tail.ready;
      return tail.cursorOf(lastEventId);
    },
    wake: () => ({ fired: tail.changed(), dispose: () => undefined }),
    recheck: () => {
      const moved = tail.peopleAt !== peopleAt;
      peopleAt = tail.peopleAt;
      return moved;
    },
    async read(cursor, role) {
      const next = tail.next(cursor, role);
      return next ? { messages: [{ id: next.id, data: next.message }], cursor: next.cursor } : { messages: [], cursor };
    },
    async close() {
      feeds.release(tail);
      // The tab closed (or lost access): it leaves the room now rather than at its TTL.
      if (who.clientId) await leavePresence(db, id, who.userId, who.clientId).catch(() => undefined);
    },
  };
}

/** The timeline's feed: the newest page when fresh, then new and changed entries (merge by id). */
export type TimelineLiveMessage =
  | { type: "page"; entries: TimelineEntry[]; earlier: string | null }
  | { type: "entries"; entries: TimelineEntry[] };

/**
 * Each viewer follows with their own filter, reading only what committed after their cursor
 * (team/timeline/follow.ts), and is checked before every read (a removed person loses it at once).
 */
export function timelineReader({ db, hub }: Live, id: SessionId, filter: TimelineFilter, from: TimelineCursor | null): FeedReader<TimelineFollower, unknown, TimelineLiveMessage> {
  let refs: MemberRef[] = [];
  return {
    start: async () => newFollower(from),
    async wake() {
      // The Lead's events and the team's board, mailbox, workspace and people changes come on the team id.
      refs = await teamMemberRefs(db, id);
      const waiters = [
        activityWaiter(hub, id, ["event", "state", "team", "board", "mail", "people", "actions", "workspace"]),
        ...refs.filter((r) => r.sessionId !== id).map((r) => activityWaiter(hub, r.sessionId, ["event"])),
      ];
      return { fired: Promise.race(waiters.map((w) => w.fired)), dispose: () => waiters.forEach((w) => w.dispose()) };
    },
    recheck: () => true,
    async read(follower) {
      const read = await followTimeline(db, id, filter, follower, refs);
      const cursor = encodeCursor(follower.cursor!);
      if (read.type === "page") return { messages: [{ id: cursor, data: { type: "page", entries: read.entries, earlier: read.earlier } }], cursor: follower, more: true };
      const messages = read.entries.length > 0 ? [{ id: cursor, data: { type: "entries" as const, entries: read.entries } }] : [];
      return { messages, cursor: follower, more: read.more };
    },
  };
}

/** The Files view's feed: every live file, then what changed; the id is the change number caught up with. */
export function filesReader({ db, hub }: Live, teamId: SessionId, from: number | null): FeedReader<number | null, unknown, FilesMessage> {
  return {
    start: async () => from,
    wake: () => activityWaiter(hub, teamId, ["workspace"]),
    async read(after) {
      if (after === null) {
        const { files, lastChange } = await filesAsOfNow(db, teamId);
        return { messages: [{ id: String(lastChange), data: { type: "files", files, lastChange } }], cursor: lastChange };
      }
      const { upsert, removed, lastChange, more } = await filesChangedAfter(db, teamId, after);
      const changed = upsert.length > 0 || removed.length > 0;
      return { messages: changed ? [{ id: String(lastChange), data: { type: "changes", upsert, removed, lastChange } }] : [], cursor: lastChange, more };
    },
  };
}

type NotificationPage = Awaited<ReturnType<typeof listNotifications>>;

/** A person's newest notifications and unread count, sent again when they change; the id is the page's version. */
export function notificationsReader({ db, hub }: Live, userId: UserId): FeedReader<string, void, NotificationPage> {
  return {
    start: async () => "",
    wake: () => activityWaiter(hub, credentialsKey(userId), ["notifications"]),
    recheck: () => true,
    async read(sent) {
      const page = await listNotifications(db.sql, userId);
      const version = createHash("sha256").update(JSON.stringify(page)).digest("base64url").slice(0, 16);
      return { messages: version === sent ? [] : [{ id: version, data: page }], cursor: version };
    },
  };
}
