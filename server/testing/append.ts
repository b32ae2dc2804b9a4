import type { Db } from "../db/client";
import { notifyActivity } from "../db/notify";
import type { SessionId } from "../ids";
import type { EventPayload, SessionEvent } from "../runtime/events";
import { appendEvents } from "../runtime/session-log";

/**
 * An append by a writer that announces nothing (seeding a log for benchmarks and end-to-end
 * tests): the events and the `event` notification naming the newest seq, in one transaction,
 * so every process's live feeds see them.
 */
export async function appendNotified(db: Db, sessionId: SessionId, payloads: EventPayload[]): Promise<SessionEvent[]> {
  return db.sqlTx(async (tx) => {
    const events = await appendEvents(tx, sessionId, payloads, null);
    await notifyActivity(tx, sessionId, "event", events.at(-1)?.seq);
    return events;
  });
}
