import { EventEmitter } from "node:events";
import pg from "pg";
import { z } from "zod";
import { abortableWait } from "../abortable";
import { Prisma } from "../db/generated/client";
import type { SqlRunner } from "../db/sql";
import type { SessionEvent } from "../runtime/events";

// Postgres LISTEN/NOTIFY fan-out. A notification is only a hint that a session changed:
// readers always re-read rows by seq, so a lost or coalesced notification loses nothing.

export const ACTIVITY_CHANNEL = "agent_activity";

/**
 * inbox: input arrived or changed; abort: stop/interrupt requested; event: log appended;
 * state: the session's status changed; team: a team's roster or budget changed; board: its task
 * board; mail: its mailbox (these three are sent on the team id, which is also its Lead's
 * session id: the Lead's own state is unchanged; split, so a live feed re-reads only what moved);
 * people: a team's people, roles, invites or presence changed (sent on the team id);
 * workspace: a team's files changed (sent on the team id); spend: a step's usage was added to
 * the session's spend (the room's figures move; nothing a waiting agent acts on).
 */
const ActivityKindSchema = z.enum(["inbox", "abort", "event", "state", "team", "board", "mail", "people", "workspace", "spend"]);
export type ActivityKind = z.infer<typeof ActivityKindSchema>;

const ActivityPayload = z.object({ s: z.string(), k: ActivityKindSchema, q: z.number().int().optional() });
export type Activity = {
  sessionId: string;
  kind: ActivityKind;
  /** `event`: the newest seq the append committed (a reader that has it skips the read). */
  lastSeq?: number;
  /** `event`, in-process only: the committed events themselves (the writer's own copy). */
  events?: SessionEvent[];
};

/** A notification's payload, as the hub reads it back. */
export function activityPayload(sessionId: string, kind: ActivityKind, lastSeq?: number): string {
  return JSON.stringify({ s: sessionId, k: kind, ...(lastSeq === undefined ? {} : { q: lastSeq }) });
}

/** The notification as an SQL expression, so it can ride in a statement that has other work. */
export function notifySql(sessionId: string, kind: ActivityKind): Prisma.Sql {
  return Prisma.sql`pg_notify(${ACTIVITY_CHANNEL}, ${activityPayload(sessionId, kind)})`;
}

/**
 * The notification for a session id the statement itself reads (`sessionId` an SQL expression,
 * e.g. a column), with the payload activityPayload writes.
 */
export function notifyColumnSql(sessionId: Prisma.Sql, kind: ActivityKind): Prisma.Sql {
  return Prisma.sql`pg_notify(${ACTIVITY_CHANNEL}, json_build_object('s', ${sessionId}, 'k', ${kind}::text)::text)`;
}

/** Sent on commit of the surrounding transaction (Postgres semantics), never before. */
export async function notifyActivity(db: SqlRunner, sessionId: string, kind: ActivityKind, lastSeq?: number): Promise<void> {
  await db.$executeRaw`SELECT pg_notify(${ACTIVITY_CHANNEL}, ${activityPayload(sessionId, kind, lastSeq)})`;
}

/**
 * One LISTEN connection per process, fanned out to in-process subscribers by session id.
 * Reconnects with backoff; after a reconnect every subscriber is poked, since notifications
 * sent while disconnected are gone.
 */
export class ActivityHub {
  private readonly emitter = new EventEmitter();
  private client: pg.Client | null = null;
  private closed = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly closers = new Set<() => void>();

  constructor(private readonly databaseUrl: string) {
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
      if (parsed.success) this.emit({ sessionId: parsed.data.s, kind: parsed.data.k, lastSeq: parsed.data.q });
    });
    client.on("error", () => this.scheduleReconnect(client));
    client.on("end", () => this.scheduleReconnect(client));
    await client.connect();
    await client.query(`LISTEN ${ACTIVITY_CHANNEL}`);
    this.client = client;
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
        () => this.emitter.emit("*", { sessionId: "*", kind: "state" } satisfies Activity),
        () => (this.retryTimer = setTimeout(attempt, 1000)),
      );
    };
    this.retryTimer = setTimeout(attempt, 250);
  }

  /**
   * Local fan-out, also used by in-process writers to skip the round trip (the runtime
   * publishes each committed append with its events, so this process's feeds need no read).
   */
  emit(activity: Activity): void {
    this.emitter.emit(activity.sessionId, activity);
    this.emitter.emit("*", activity);
  }

  /** Listen to one session's activity (or "*" for all). Returns an unsubscribe function. */
  on(sessionId: string, fn: (a: Activity) => void): () => void {
    this.emitter.on(sessionId, fn);
    // A reconnect pokes "*": session listeners hear it too so they re-read.
    const poke = (a: Activity) => a.sessionId === "*" && fn(a);
    if (sessionId !== "*") this.emitter.on("*", poke);
    return () => {
      this.emitter.off(sessionId, fn);
      if (sessionId !== "*") this.emitter.off("*", poke);
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

  async close(): Promise<void> {
    this.closed = true;
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
  let fire!: () => void;
  const fired = new Promise<void>((resolve) => (fire = resolve));
  const off = hub.on(sessionId, (a) => {
    if (kinds && a.sessionId !== "*" && !kinds.includes(a.kind)) return;
    fire();
  });
  return {
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
