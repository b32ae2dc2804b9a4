import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import pg from "pg";
import { abortableWait } from "../abortable";
import { type DatabaseUrls, directUrlOf } from "../db/client";
import { ACTIVITY_CHANNEL, type Activity as AnyActivity, type ActivityBus, type ActivityKind, activityPayload, ActivityPayload, credentialsKey } from "../db/notify";
import type { SessionEvent } from "../runtime/events";

/** What the hub carries: an `event` activity may hold the appended events themselves. */
export type Activity = AnyActivity<SessionEvent>;

// The process's LISTEN connection and its fan-out to in-process subscribers (db/notify.ts says
// what is sent). Announced after the commit (ActivityHub.announce; the runtime's appends): this
// process hears it at once, other processes in a NOTIFY transaction of the hub's own shortly
// after.

/**
 * Announcements reach other processes in at most one NOTIFY transaction per this many ms (the
 * first at once): a bounded number of commits per process however much it announces.
 */
export const ANNOUNCE_INTERVAL_MS = 25;
/** The event a reconnect's poke reaches session listeners by (not "*": every activity goes there). */
const POKE = Symbol("poke");

/** One transaction: every payload notified (a statement alone commits on its own). */
const NOTIFY_ALL = `SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p`;

/**
 * One connection per process: it LISTENs, fanned out to in-process subscribers by session id,
 * and sends this process's announcements. Reconnects with backoff; after a reconnect every
 * subscriber is poked, since notifications sent while disconnected are gone.
 */
export class ActivityHub implements ActivityBus<SessionEvent> {
  private readonly emitter = new EventEmitter();
  private client: pg.Client | null = null;
  private closed = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly closers = new Set<() => void>();
  /** Names this hub in its announcements' payloads. */
  private readonly origin = randomBytes(6).toString("base64url");
  /** Announcements not sent yet, one per session and kind (the newest seq). */
  private readonly pending = new Map<string, Activity>();
  private sendTimer: NodeJS.Timeout | null = null;
  private sending: Promise<void> | null = null;
  private lastSentAt = -Infinity;

  private readonly databaseUrl: string;

  /** LISTEN needs a session of its own: the direct URL, never a transaction-mode pooler. */
  constructor(database: DatabaseUrls) {
    this.databaseUrl = directUrlOf(database);
    this.emitter.setMaxListeners(0);
  }

  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on("notification", (msg) => {
      if (msg.channel !== ACTIVITY_CHANNEL || !msg.payload) return;
      const parsed = ActivityPayload.safeParse(JSON.parse(msg.payload));
      if (parsed.success && parsed.data.o !== this.origin) this.emit({ sessionId: parsed.data.s, kind: parsed.data.k, lastSeq: parsed.data.q });
    });
    client.on("error", () => this.scheduleReconnect(client));
    client.on("end", () => this.scheduleReconnect(client));
    await client.connect();
    // Announcements need no flush of their own: they follow commits that were flushed, and a
    // notification is gone with the server anyway.
    await client.query(`LISTEN ${ACTIVITY_CHANNEL}; SET synchronous_commit = off`);
    this.client = client;
    this.scheduleSend();
  }

  private scheduleReconnect(failed: pg.Client): void {
    if (this.closed || this.client !== failed) return;
    this.client = null;
    failed.removeAllListeners("end");
    void failed.end().catch(() => undefined);
    const attempt = () => {
      this.retryTimer = null;
      if (this.closed) return;
      this.connect().then(
        () => this.emit({ sessionId: "*", kind: "state" }),
        () => (this.retryTimer = setTimeout(attempt, 1000)),
      );
    };
    this.retryTimer = setTimeout(attempt, 250);
  }

  /**
   * Local fan-out (announce's first half). Session id "*" is a poke: every listener, of every
   * session, re-reads.
   */
  emit(activity: Activity): void {
    this.emitter.emit(activity.sessionId === "*" ? POKE : activity.sessionId, activity);
    this.emitter.emit("*", activity);
  }

  /**
   * A change that committed (call it after the commit): this process's subscribers hear it now
   * (with `events`, if given), other processes' within ANNOUNCE_INTERVAL_MS or so, coalesced
   * per session and kind. A process that dies before sending loses the hint for the others;
   * their readers catch up at the session's next notification or their periodic re-read.
   */
  announce(activity: Activity): void {
    this.emit(activity);
    this.queue(activity);
    this.scheduleSend();
  }

  private queue({ sessionId, kind, lastSeq }: Activity): void {
    const key = `${kind}:${sessionId}`;
    const prev = this.pending.get(key);
    // Without a seq a notification means "re-read": merged, it stays one.
    const merged = !prev ? lastSeq : prev.lastSeq === undefined || lastSeq === undefined ? undefined : Math.max(prev.lastSeq, lastSeq);
    this.pending.set(key, { sessionId, kind, lastSeq: merged });
  }

  /** One send at a time, at most one per ANNOUNCE_INTERVAL_MS; what comes meanwhile waits and merges. */
  private scheduleSend(): void {
    if (this.closed || this.sendTimer || this.sending || !this.client || this.pending.size === 0) return;
    const wait = Math.max(0, this.lastSentAt + ANNOUNCE_INTERVAL_MS - performance.now());
    this.sendTimer = setTimeout(() => {
      this.sendTimer = null;
      this.sending = this.send().finally(() => {
        this.sending = null;
        this.scheduleSend();
      });
    }, wait);
  }

  private async send(): Promise<void> {
    const client = this.client;
    if (!client || this.pending.size === 0) return;
    const batch = [...this.pending.values()];
    this.pending.clear();
    this.lastSentAt = performance.now();
    try {
      await client.query(NOTIFY_ALL, [ACTIVITY_CHANNEL, batch.map((a) => activityPayload(a.sessionId, a.kind, a.lastSeq, this.origin))]);
    } catch {
      // The connection is failing: keep the batch (merged with what came since) for the next one.
      for (const a of batch) this.queue(a);
      this.scheduleReconnect(client);
    }
  }

  /** Listen to one session's activity (or "*" for all). Returns an unsubscribe function. */
  on(sessionId: string, fn: (a: Activity) => void): () => void {
    this.emitter.on(sessionId, fn);
    // A reconnect pokes everyone (sessionId "*"): session listeners hear it too so they re-read.
    if (sessionId !== "*") this.emitter.on(POKE, fn);
    return () => {
      this.emitter.off(sessionId, fn);
      if (sessionId !== "*") this.emitter.off(POKE, fn);
    };
  }

  /** How many in-process listeners one session has (diagnostics; tests wait on it). */
  listenerCount(sessionId: string): number {
    return this.emitter.listenerCount(sessionId);
  }

  /** Runs when the hub closes (the process's shared feed readers stop with it). */
  onClose(fn: () => void): void {
    this.closers.add(fn);
  }

  /** Sends what is still to be announced, then disconnects. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.sendTimer) clearTimeout(this.sendTimer);
    this.sendTimer = null;
    await this.sending;
    await this.send();
    for (const fn of this.closers) fn();
    this.closers.clear();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const c = this.client;
    this.client = null;
    if (c) {
      c.removeAllListeners("end");
      await c.end().catch(() => undefined);
    }
  }
}

/**
 * Resolves on the next activity for `sessionId` (of one of `kinds`, if given), after
 * `timeoutMs`, or when `signal` aborts.
 * Subscribe *before* reading state, then await: nothing between the read and the wait is missed.
 */
export function activityWaiter(hub: ActivityHub, sessionId: string, kinds?: readonly ActivityKind[]) {
  let heard = false;
  let fire!: () => void;
  const fired = new Promise<void>((resolve) => (fire = resolve));
  const off = hub.on(sessionId, (a) => {
    if (kinds && a.sessionId !== "*" && !kinds.includes(a.kind)) return;
    heard = true;
    fire();
  });
  return {
    /** Whether a matching activity (or a reconnect's poke) came. */
    get heard(): boolean {
      return heard;
    },
    /** Settles when one comes, or on dispose. */
    fired,
    async wait(timeoutMs: number, signal?: AbortSignal): Promise<void> {
      await abortableWait({ ms: timeoutMs, until: fired, signal });
    },
    /** Stops listening and settles a pending wait (its timer and abort listener go too). */
    dispose() {
      off();
      fire();
    },
  };
}
export type ActivityWaiter = ReturnType<typeof activityWaiter>;

/**
 * Wakes a live feed whose access may have ended: one of the person's credentials ended (a
 * sign-out, a revoked token: on every process, by the tables' trigger), or, given a team, the
 * team's people changed (a removal, a role change).
 */
export function accessWaiter(hub: ActivityHub, userId: string, teamId: string | null): ActivityWaiter {
  const waiters = [activityWaiter(hub, credentialsKey(userId), ["credentials"]), ...(teamId ? [activityWaiter(hub, teamId, ["people"])] : [])];
  const fired = Promise.race(waiters.map((w) => w.fired));
  return {
    get heard() {
      return waiters.some((w) => w.heard);
    },
    fired,
    wait: (timeoutMs, signal) => abortableWait({ ms: timeoutMs, until: fired, signal }).then(() => undefined),
    dispose: () => waiters.forEach((w) => w.dispose()),
  };
}
