import { z } from "zod";
import type { DbOrTx } from "../db/client";
import type { SessionId, UserId } from "../ids";
import { notifyActivity } from "../live/activity";
import { PRESENCE_TTL_MS } from "./presence-timing";

// Who is in a team room (docs/SPEC.md §13 Presence). Each open tab has a row, refreshed by
// its heartbeat and removed when its team feed closes; a tab that vanished without closing
// (crash, lost network) drops out once its row is older than PRESENCE_TTL_MS.

export { PRESENCE_HEARTBEAT_MS, PRESENCE_TTL_MS } from "./presence-timing";

/** A browser tab's own random id. */
export const PresenceClientId = z.string().regex(/^[A-Za-z0-9_-]{8,64}$/, "A client id is 8–64 letters, digits, - or _");

export const PresenceViewSchema = z.object({
  clientId: z.string(),
  userId: z.string(),
  name: z.string(),
  watching: z.string().nullable(),
  typingTo: z.string().nullable(),
});
export type PresenceView = z.infer<typeof PresenceViewSchema>;

export interface PresenceUpdate {
  clientId: string;
  watching: SessionId | null;
  typingTo: SessionId | null;
}

const ChangedRows = z.array(z.object({ changed: z.boolean() }));

/**
 * Upserts a tab's row (a client id stays with the person and team that made it); notifies the
 * room only when what the room shows changed, so heartbeats cost no wake-ups.
 */
export async function updatePresence(db: DbOrTx, teamId: SessionId, userId: UserId, u: PresenceUpdate): Promise<void> {
  // Tabs that vanished without closing (crash, lost network) leave no rows behind.
  await db.$executeRaw`DELETE FROM presence WHERE team_id = ${teamId} AND last_seen < now() - make_interval(secs => ${PRESENCE_TTL_MS / 1000})`;
  const [row] = ChangedRows.parse(
    await db.$queryRaw`WITH old AS (SELECT watching, typing_to FROM presence WHERE client_id = ${u.clientId}),
      up AS (
        INSERT INTO presence (client_id, team_id, user_id, watching, typing_to, last_seen)
        VALUES (${u.clientId}, ${teamId}, ${userId}, ${u.watching}, ${u.typingTo}, now())
        ON CONFLICT (client_id) DO UPDATE SET watching = EXCLUDED.watching, typing_to = EXCLUDED.typing_to, last_seen = now()
          WHERE presence.team_id = EXCLUDED.team_id AND presence.user_id = EXCLUDED.user_id
        RETURNING watching, typing_to)
      SELECT EXISTS (SELECT 1 FROM up) AND (NOT EXISTS (SELECT 1 FROM old) OR EXISTS (SELECT 1 FROM old, up
        WHERE old.watching IS DISTINCT FROM up.watching OR old.typing_to IS DISTINCT FROM up.typing_to)) AS changed`,
  );
  if (row?.changed) await notifyActivity(db, teamId, "people");
}

/** A closing tab's row goes; only its own person's (client ids are on every teammate's screen). */
export async function leavePresence(db: DbOrTx, teamId: SessionId, userId: UserId, clientId: string): Promise<void> {
  const { count } = await db.presence.deleteMany({ where: { clientId, teamId, userId } });
  if (count > 0) await notifyActivity(db, teamId, "people");
}

const PresenceRows = z.array(
  z.object({ client_id: z.string(), user_id: z.string(), name: z.string(), watching: z.string().nullable(), typing_to: z.string().nullable() }),
);

/** The room's live tabs (rows older than the TTL are gone), one entry per tab. */
export async function listPresence(db: DbOrTx, teamId: SessionId): Promise<PresenceView[]> {
  const rows = PresenceRows.parse(
    await db.$queryRaw`SELECT p.client_id, p.user_id, u.name, p.watching, p.typing_to FROM presence p
      JOIN users u ON u.id = p.user_id JOIN team_people tp ON tp.team_id = p.team_id AND tp.user_id = p.user_id
      WHERE p.team_id = ${teamId} AND p.last_seen > now() - make_interval(secs => ${PRESENCE_TTL_MS / 1000})
      ORDER BY u.name, p.client_id`,
  );
  return rows.map((r) => ({ clientId: r.client_id, userId: r.user_id, name: r.name, watching: r.watching, typingTo: r.typing_to }));
}
