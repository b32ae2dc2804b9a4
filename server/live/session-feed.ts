import type { Db } from "../db/client";
import { asSessionId, type SessionId } from "../ids";
import type { SessionEvent } from "../runtime/events";
import type { InboxItemView } from "../runtime/inbox";
import { readEventsAfter, readEventsBefore } from "../runtime/session-log";
import { getSessionWithInbox, type SessionView } from "../runtime/sessions";
import type { Activity, ActivityHub } from "./activity";
import { ChangeSignal, perProcess, SharedReaders, type SharedReader } from "./shared-readers";

// The shared reader behind every live feed of one session in this process. However many
// people watch a session, its new events are read once per change (and not at all when this
// process's runtime wrote them: it publishes the committed events), and its state once per
// state change. Notifications stay hints: a gap in what was published, a notification naming
// a newer seq, a LISTEN reconnect or the periodic safety re-read all fall back to reading rows
// by seq, so a lost or coalesced hint loses nothing.

export interface SessionState {
  session: SessionView;
  inbox: InboxItemView[];
}

/** The most events one feed message carries (a long history arrives in a few messages). */
export const FEED_BATCH = 500;
/** The newest events kept in memory per watched session; a subscriber further back reads rows. */
const TAIL_EVENTS = 1_000;
/** The safety net: a watched session's rows are re-read this often even without a hint. */
export const FEED_REREAD_MS = 15_000;
/** How long a publish past a gap waits for this process's publish of the gap before a read. */
const PUBLISH_GRACE_MS = 30;
/**
 * Events that change the state a room shows without a `state` or `inbox` notification of their
 * own: a turn's end (running) and a claimed message (the inbox it left). A turn's start
 * notifies `state` itself; runtime context and summaries come from no inbox.
 */
function changesState(e: SessionEvent): boolean {
  if (e.payload.kind === "turn_end") return true;
  return e.payload.kind === "user_message" && (e.payload.source.kind === "human" || e.payload.source.kind === "team" || e.payload.source.kind === "system");
}

/**
 * One watched session: its newest events (ascending, gap-free, ending at `head`) and its
 * state, kept current while at least one feed holds it.
 */
export class SessionTail implements SharedReader {
  private events: SessionEvent[] = [];
  /** The newest seq read or published; every event up to it is accounted for. */
  private head = 0;
  private loaded = false;
  private current: { state: SessionState; key: string } | null = null;
  private dirty = { events: true, state: true };
  private draining: Promise<void> | null = null;
  private readonly change = new ChangeSignal();
  private readonly off: () => void;
  private readonly timer: NodeJS.Timeout;
  /** The newest seq published past a gap; read after PUBLISH_GRACE_MS unless the gap is published by then. */
  private wanted = 0;
  private graceTimer: NodeJS.Timeout | null = null;
  /** Reads made so far (diagnostics: tests and benchmarks see that one read serves every feed). */
  readonly reads = { events: 0, state: 0 };
  private closed = false;
  readonly ready: Promise<void>;

  constructor(
    private readonly db: Db,
    hub: ActivityHub,
    readonly sessionId: SessionId,
  ) {
    // Listen before the first read: nothing committed in between is missed.
    this.off = hub.on(sessionId, (a) => this.onActivity(a));
    this.timer = setInterval(() => this.schedule({ events: true, state: true }), FEED_REREAD_MS);
    this.timer.unref();
    this.draining = this.drain();
    this.ready = this.draining;
  }

  get key(): string {
    return this.sessionId;
  }

  /** Settles on the next change of events or state. */
  changed(): Promise<void> {
    return this.change.next();
  }

  /** The state as last read (after `ready`). */
  get state(): { state: SessionState; key: string } | null {
    return this.current;
  }

  /**
   * Up to `limit` events after `after` from memory, or null when `after` is older than the
   * events kept here (the caller reads those rows itself).
   */
  eventsAfter(after: number, limit: number): SessionEvent[] | null {
    if (after >= this.head) return [];
    const first = this.events[0]?.seq ?? this.head + 1;
    if (after < first - 1) return null;
    return this.events.slice(after - first + 1, after - first + 1 + limit);
  }

  close(): void {
    this.closed = true;
    this.off();
    clearInterval(this.timer);
    if (this.graceTimer) clearTimeout(this.graceTimer);
    this.change.fire();
  }

  private onActivity(a: Activity): void {
    if (a.sessionId === "*") return this.schedule({ events: true, state: true });
    // Neither a step's spend nor a change of the team (on a Lead's id) is in the session's state.
    if (a.kind === "spend" || a.kind === "team" || a.kind === "board" || a.kind === "mail" || a.kind === "people" || a.kind === "actions" || a.kind === "workspace") return;
    if (a.kind !== "event") return this.schedule({ events: false, state: true });
    if (!this.loaded) return this.schedule({ events: true, state: false });
    if (a.events?.[0]?.seq === this.head + 1) return this.take(a.events);
    if (a.lastSeq === undefined) return this.schedule({ events: true, state: false });
    if (a.lastSeq <= this.head) return;
    // Another process's append (a notification carries no events): read it now. This
    // process never hears its own appends by notification, only by their publish.
    if (!a.events) return this.schedule({ events: true, state: false });
    // This process's publishes of two appends answered out of order: give the gap's publish a
    // moment before reading.
    this.wanted = Math.max(this.wanted, a.lastSeq);
    this.graceTimer ??= setTimeout(() => {
      this.graceTimer = null;
      if (this.head < this.wanted) this.schedule({ events: true, state: false });
    }, PUBLISH_GRACE_MS);
  }

  private take(events: SessionEvent[]): void {
    this.events.push(...events);
    if (this.events.length > TAIL_EVENTS) this.events.splice(0, this.events.length - TAIL_EVENTS);
    this.head = events.at(-1)!.seq;
    if (events.some(changesState)) this.schedule({ events: false, state: true });
    this.change.fire();
  }

  private schedule(what: { events: boolean; state: boolean }): void {
    this.dirty.events ||= what.events;
    this.dirty.state ||= what.state;
    this.draining ??= this.drain();
  }

  /** Reads what is dirty until nothing is; one read at a time, however many hints came. */
  private async drain(): Promise<void> {
    try {
      while (!this.closed && (this.dirty.events || this.dirty.state)) {
        try {
          if (this.dirty.events) {
            this.dirty.events = false;
            await this.readEvents();
          }
          if (this.dirty.state) {
            this.dirty.state = false;
            this.reads.state += 1;
            const state: SessionState = await getSessionWithInbox(this.db.sql, this.sessionId);
            const key = JSON.stringify(state);
            if (key !== this.current?.key) {
              this.current = { state, key };
              this.change.fire();
            }
          }
        } catch {
          // A failed read (the database restarting) is tried again; the feeds keep waiting.
          this.dirty = { events: true, state: true };
          await new Promise((resolve) => setTimeout(resolve, 1_000).unref());
        }
      }
    } finally {
      this.draining = null;
    }
  }

  private async readEvents(): Promise<void> {
    this.reads.events += 1;
    if (!this.loaded) {
      // The first read takes the newest events only: a long history is paged by its readers.
      const newest = await readEventsBefore(this.db.sql, this.sessionId, undefined, TAIL_EVENTS);
      this.loaded = true;
      this.events = [];
      this.head = (newest[0]?.seq ?? 1) - 1;
      if (newest.length > 0) this.take(newest);
      return;
    }
    for (;;) {
      const rows = await readEventsAfter(this.db.sql, this.sessionId, this.head, FEED_BATCH);
      // Published events may have moved the head while the read ran.
      const fresh = rows.filter((e) => e.seq > this.head);
      if (fresh.length > 0) this.take(fresh);
      if (rows.length < FEED_BATCH) return;
    }
  }
}

/** This process's tails, one per watched session, shared by all of its feeds. */
export class SessionFeeds extends SharedReaders<SessionTail> {
  constructor(db: Db, hub: ActivityHub) {
    super((id) => new SessionTail(db, hub, asSessionId(id)));
  }
}

/** The session feeds of the process that owns `hub` (one hub per process). */
export const sessionFeedsOf = perProcess((db, hub) => new SessionFeeds(db, hub));
