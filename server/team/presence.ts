import { z } from "zod";
import type { DbOrTx } from "../db/client";
import type { SessionId, UserId } from "../ids";
import { notifyActivity } from "../db/notify";
import { WorkspaceInput } from "../workspace/schema";
import { PRESENCE_TTL_MS } from "../../shared/presence-timing";
import { TaskIdSchema } from "../task-ids";

// Who is in a team room (docs/SPEC.md §13 Presence). Each open tab has a row, refreshed by
// its heartbeat and removed when its team feed closes; a tab that vanished without closing
// (crash, lost network) drops out once its row is older than PRESENCE_TTL_MS.

/** A browser tab's own random id. */
export const PresenceClientId = z.string().regex(/^[A-Za-z0-9_-]{8,64}$/, "A client id is 8–64 letters, digits, - or _");

/** Where in the room a tab is: a view of the centre, or the board (a phone's Tasks screen). */
export const PRESENCE_PLACES = ["agent", "timeline", "split", "files", "board"] as const;

export const PresenceEditingSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("task"), taskId: TaskIdSchema }),
  z.object({ kind: z.literal("file"), path: WorkspaceInput.path }),
]);
export type PresenceEditing = z.infer<typeof PresenceEditingSchema>;

/** Where a tab is beyond the agent it watches: the input's fields, and what the room is shown. */
export const PresenceWhereSchema = z.object({
  place: z.enum(PRESENCE_PLACES),
  /** The file open in the Files view. */
  file: WorkspaceInput.path.nullable(),
  editing: PresenceEditingSchema.nullable(),
});
export type PresenceWhere = z.infer<typeof PresenceWhereSchema>;

export const PresenceViewSchema = PresenceWhereSchema.extend({
  clientId: z.string(),
  userId: z.string(),
  name: z.string(),
  watching: z.string().nullable(),
  typingTo: z.string().nullable(),
});
export type PresenceView = z.infer<typeof PresenceViewSchema>;

export interface PresenceUpdate extends PresenceWhere {
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
  const editingTask = u.editing?.kind === "task" ? u.editing.taskId : null;
  const editingFile = u.editing?.kind === "file" ? u.editing.path : null;
  const [row] = ChangedRows.parse(
    await db.$queryRaw`WITH old AS (SELECT watching, typing_to, place, file_path, editing_task, editing_file FROM presence WHERE client_id = ${u.clientId}),
      up AS (
        INSERT INTO presence (client_id, team_id, user_id, watching, typing_to, place, file_path, editing_task, editing_file, last_seen)
        VALUES (${u.clientId}, ${teamId}, ${userId}, ${u.watching}, ${u.typingTo}, ${u.place}, ${u.file}, ${editingTask}, ${editingFile}, now())
        ON CONFLICT (client_id) DO UPDATE SET watching = EXCLUDED.watching, typing_to = EXCLUDED.typing_to, place = EXCLUDED.place,
          file_path = EXCLUDED.file_path, editing_task = EXCLUDED.editing_task, editing_file = EXCLUDED.editing_file, last_seen = now()
          WHERE presence.team_id = EXCLUDED.team_id AND presence.user_id = EXCLUDED.user_id
        RETURNING watching, typing_to, place, file_path, editing_task, editing_file)
      SELECT EXISTS (SELECT 1 FROM up) AND (NOT EXISTS (SELECT 1 FROM old) OR EXISTS (SELECT 1 FROM old, up
        WHERE (old.watching, old.typing_to, old.place, old.file_path, old.editing_task, old.editing_file)
          IS DISTINCT FROM (up.watching, up.typing_to, up.place, up.file_path, up.editing_task, up.editing_file))) AS changed`,
  );
  if (row?.changed) await notifyActivity(db, teamId, "people");
}

/** A closing tab's row goes; only its own person's (client ids are on every teammate's screen). */
export async function leavePresence(db: DbOrTx, teamId: SessionId, userId: UserId, clientId: string): Promise<void> {
  const { count } = await db.presence.deleteMany({ where: { clientId, teamId, userId } });
  if (count > 0) await notifyActivity(db, teamId, "people");
}

const PresenceRows = z.array(
  z.object({
    client_id: z.string(),
    user_id: z.string(),
    name: z.string(),
    watching: z.string().nullable(),
    typing_to: z.string().nullable(),
    place: z.enum(PRESENCE_PLACES).catch("agent"),
    file_path: z.string().nullable(),
    editing_task: z.string().nullable(),
    editing_file: z.string().nullable(),
  }),
);

/** The room's live tabs (rows older than the TTL are gone), one entry per tab. */
export async function listPresence(db: DbOrTx, teamId: SessionId): Promise<PresenceView[]> {
  const rows = PresenceRows.parse(
    await db.$queryRaw`SELECT p.client_id, p.user_id, u.name, p.watching, p.typing_to, p.place, p.file_path, p.editing_task, p.editing_file FROM presence p
      JOIN users u ON u.id = p.user_id JOIN team_people tp ON tp.team_id = p.team_id AND tp.user_id = p.user_id
      WHERE p.team_id = ${teamId} AND p.last_seen > now() - make_interval(secs => ${PRESENCE_TTL_MS / 1000})
      ORDER BY u.name, p.client_id`,
  );
  return rows.map((r) => ({
    clientId: r.client_id,
    userId: r.user_id,
    name: r.name,
    watching: r.watching,
    typingTo: r.typing_to,
    place: r.place,
    file: r.file_path,
    editing: r.editing_task ? { kind: "task", taskId: r.editing_task } : r.editing_file ? { kind: "file", path: r.editing_file } : null,
  }));
}
