-- Routines (SPEC.md §21): a person's prompt to a team's Lead on a schedule. A run and the
-- routine's next time commit in one transaction (routines/runner.ts), and a run is unique per
-- routine and scheduled time, so each time runs once whatever processes race or crash.
CREATE TABLE "routines" (
  "id" TEXT PRIMARY KEY,
  "team_id" TEXT NOT NULL REFERENCES "teams" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "name" TEXT NOT NULL,
  "prompt" TEXT NOT NULL,
  -- {"kind":"cron","cron":"0 9 * * 1-5","timeZone":"Europe/Berlin"} or {"kind":"interval","every":30,"unit":"minutes"}
  "schedule" JSONB NOT NULL,
  "missed" TEXT NOT NULL CONSTRAINT "routines_missed_check" CHECK ("missed" IN ('skip', 'run_once')),
  "overlap" TEXT NOT NULL CONSTRAINT "routines_overlap_check" CHECK ("overlap" IN ('skip', 'queue')),
  "owner_id" TEXT NOT NULL,
  "owner_name" TEXT NOT NULL,
  "paused" BOOLEAN NOT NULL DEFAULT false,
  -- The next scheduled time; NULL while paused.
  "next_run_at" TIMESTAMPTZ(3),
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX "routines_team_id_idx" ON "routines" ("team_id");
CREATE INDEX "routines_due_idx" ON "routines" ("next_run_at") WHERE "next_run_at" IS NOT NULL;

CREATE TABLE "routine_runs" (
  "id" BIGSERIAL PRIMARY KEY,
  "routine_id" TEXT NOT NULL REFERENCES "routines" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "team_id" TEXT NOT NULL,
  -- The time it was scheduled for (a manual run: when it was asked for).
  "scheduled_for" TIMESTAMPTZ(3) NOT NULL,
  "trigger" TEXT NOT NULL CONSTRAINT "routine_runs_trigger_check" CHECK ("trigger" IN ('schedule', 'recovery', 'manual')),
  "status" TEXT NOT NULL CONSTRAINT "routine_runs_status_check" CHECK ("status" IN ('queued', 'skipped')),
  -- skipped: why (overlap, missed, owner_left).
  "reason" TEXT,
  -- queued: the Lead's inbox item that carries the prompt (its turn is found by it).
  "item_id" TEXT,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "routine_runs_once" UNIQUE ("routine_id", "scheduled_for")
);
CREATE INDEX "routine_runs_routine_id_id_idx" ON "routine_runs" ("routine_id", "id");

ALTER TABLE "team_events" DROP CONSTRAINT "team_events_kind_check";
ALTER TABLE "team_events" ADD CONSTRAINT "team_events_kind_check" CHECK ("kind" IN ('approval.requested', 'question.asked', 'plan.proposed', 'team.finished', 'agent.failed', 'budget.reached', 'mention', 'memory.proposed', 'routine.skipped'));
