-- The mailbox's partial indexes (issue 12). schema.prisma cannot express a partial index:
-- server/db/drift.test.ts declares both (name and definition) and checks they exist exactly so.

-- Delivery (a target's queued rows in seq order) and recovery (which targets have queued rows):
-- only the few rows still queued are in it.
CREATE INDEX "team_messages_target_queued_idx" ON "team_messages"("target_session_id", "seq") WHERE "state" = 'queued';

-- The pending count of a send (a target's rows not yet consumed).
CREATE INDEX "team_messages_target_unconsumed_idx" ON "team_messages"("target_session_id") WHERE "consumed_at" IS NULL;

-- Replaced by the two above: nothing reads a target's rows by state and seq any more.
DROP INDEX "team_messages_target_session_id_state_seq_idx";
