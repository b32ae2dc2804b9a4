import { tracked, type TrackedEnvelope } from "@trpc/server";
import { abortableWait } from "../abortable";
import { accessWaiter } from "../live/activity";
import type { FeedReader } from "../live/feed-readers";
import type { PersonContext } from "./init";

// Every live feed (session, team, timeline, files, notifications) is this one loop:
// subscribe → access check → incremental read → send → wait, with the cursor the client sends
// back on reconnect. Its reader (live/feed-readers.ts) says where a cursor resumes, what follows
// it and what wakes it:
//  - it subscribes before each read, so a change committed while it reads wakes it again;
//  - the person's access is checked before the first read and again when their credentials or
//    the team's people change (a sign-out, a revoked token, a removal end the feed at once),
//    when the reader asks, and every `recheckMs` (a sign-in that expired);
//  - each read costs what changed since the cursor, and a reconnect with the last event id
//    resumes after it: no gap, no duplicate.

export interface LiveFeedOptions<C, A, M> {
  /** The team whose people changes wake the feed for an access check; null: credentials only. */
  teamId: string | null;
  /** Throws (a typed tRPC error) when the person may no longer watch; else what the reader needs of their access. */
  access: () => Promise<A>;
  /** Opens the feed's reader (when the feed starts; closed when it ends). */
  open: () => FeedReader<C, A, M>;
  signal: AbortSignal | undefined;
  /** The longest wait without a read, and between access checks. */
  recheckMs: number;
  /** The least time between two reads (a busy team streams many changes a second). */
  minIntervalMs?: number;
}

/** What the loop needs of the request: the process's hub, and whose access it watches. */
export type FeedContext = Pick<PersonContext, "hub"> & { person: { id: string } };

export async function* liveFeed<C, A, M>(ctx: FeedContext, o: LiveFeedOptions<C, A, M>): AsyncGenerator<TrackedEnvelope<M>> {
  const { signal } = o;
  const reader = o.open();
  try {
    let cursor: C = await reader.start();
    let access: { value: A } | null = null;
    let checkedAt = 0;
    let recheck = false;
    while (!signal?.aborted) {
      // Both taken before reading: nothing that commits while this feed reads is missed.
      const wake = await reader.wake();
      const ended = accessWaiter(ctx.hub, ctx.person.id, o.teamId);
      try {
        const asked = reader.recheck?.() ?? false;
        if (!access || recheck || asked || Date.now() - checkedAt >= o.recheckMs) {
          access = { value: await o.access() };
          checkedAt = Date.now();
          recheck = false;
        }
        const started = Date.now();
        const read = await reader.read(cursor, access.value);
        cursor = read.cursor;
        for (const m of read.messages) yield tracked(m.id, m.data);
        if (read.more) continue;
        await abortableWait({ ms: o.recheckMs, until: Promise.race([wake.fired, ended.fired]), signal });
        recheck = ended.heard;
        if (o.minIntervalMs) await abortableWait({ ms: started + o.minIntervalMs - Date.now(), signal });
      } finally {
        wake.dispose();
        ended.dispose();
      }
    }
  } finally {
    await reader.close?.();
  }
}
