-- What happened in a team that people (notifications) and other systems (webhooks) are told of:
-- a durable outbox, each row written in the transaction of what it reports, fanned out once.
CREATE TABLE "team_events" (
    "id" BIGSERIAL NOT NULL,
    "team_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    -- One row per happening, however often its writer runs (a retried commit, a recovery).
    "dedupe_key" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "dispatched_at" TIMESTAMPTZ(3),
    CONSTRAINT "team_events_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "team_events_kind_check" CHECK ("kind" IN ('approval.requested', 'question.asked', 'team.finished', 'agent.failed', 'budget.reached', 'mention'))
);
CREATE UNIQUE INDEX "team_events_dedupe_key_key" ON "team_events"("dedupe_key");
-- The dispatcher's queue: only the few rows not fanned out yet.
CREATE INDEX "team_events_undispatched_idx" ON "team_events"("id") WHERE "dispatched_at" IS NULL;

-- One person's notification of one team event.
CREATE TABLE "notifications" (
    "id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "event_id" BIGINT NOT NULL,
    "kind" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    -- The request to decide or answer, for approval and question notifications.
    "approval_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "read_at" TIMESTAMPTZ(3),
    CONSTRAINT "notifications_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "notifications_user_id_event_id_key" ON "notifications"("user_id", "event_id");
CREATE INDEX "notifications_user_id_created_at_idx" ON "notifications"("user_id", "created_at");

-- What a person does not want to be notified of (team event kinds).
CREATE TABLE "notification_settings" (
    "user_id" TEXT NOT NULL,
    "muted" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "notification_settings_pkey" PRIMARY KEY ("user_id")
);
