import { z } from "zod";
import { Prisma } from "../db/generated/client";
import type { SqlRunner } from "../db/sql";
import { AppError } from "../errors";
import type { SessionId } from "../ids";
import { ModelChoiceSchema } from "../models/choice";
import type { Statement } from "./session-log";

// What a resident agent reads of its session: its settings before each turn (one statement,
// which also rides with a turn's end, turn-close.ts tryCompleteTurn, so the loop's next look
// costs no round trip), and a stop or interrupt stored for its running turn.

const SessionSettings = z.object({
  model: ModelChoiceSchema,
  optional_context: z.boolean(),
  parked: z.boolean(),
  active_turn_id: z.string().nullable(),
  team_id: z.string().nullable(),
  /** Whether the inbox holds anything (what the loop needs of it). */
  pending: z.boolean(),
});

export type Settings = z.infer<typeof SessionSettings>;
const SettingsRows = z.array(SessionSettings);

export function settingsStatement(sessionId: SessionId): Statement<Settings> {
  return {
    sql: Prisma.sql`SELECT s.model, s.optional_context, s.parked, s.active_turn_id, s.team_id,
        EXISTS (SELECT 1 FROM inbox_items i WHERE i.session_id = s.id) AS pending
      FROM sessions s WHERE s.id = ${sessionId}`,
    read: (rows) => {
      const row = SettingsRows.parse(rows)[0];
      if (!row) throw new AppError("SESSION_NOT_FOUND", `Session ${sessionId} not found`);
      return row;
    },
  };
}

const AbortKindRows = z.array(z.object({ kind: z.string().nullable() }));

/** The stop or interrupt stored for the session's running turn, if any. */
export async function turnAbortRequest(db: SqlRunner, sessionId: SessionId): Promise<"stop" | "interrupt" | null> {
  const rows = await db.$queryRaw`SELECT abort_request AS kind FROM sessions WHERE id = ${sessionId} AND active_turn_id IS NOT NULL`;
  const kind = AbortKindRows.parse(rows)[0]?.kind;
  return kind === "stop" || kind === "interrupt" ? kind : null;
}
