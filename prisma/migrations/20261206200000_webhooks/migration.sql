-- Webhooks (SPEC.md §17): a team's endpoints for its events, and each event's delivery to each,
-- written by the team-event dispatcher in the transaction that fans the event out.
CREATE TABLE "webhooks" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    -- The team event kinds it receives.
    "events" TEXT[] DEFAULT ARRAY[]::TEXT[],
    -- The Standard Webhooks signing secret (whsec_…), shown to the owner once.
    "secret" TEXT NOT NULL,
    "created_by" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "webhooks_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "webhooks_team_id_idx" ON "webhooks"("team_id");

CREATE TABLE "webhook_deliveries" (
    -- The webhook-id header: the same on every attempt, so a receiver can drop repeats.
    "id" TEXT NOT NULL,
    "webhook_id" TEXT NOT NULL,
    "event_id" BIGINT NOT NULL,
    "payload" JSONB NOT NULL,
    -- pending | delivered | failed
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_status_code" INTEGER,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "delivered_at" TIMESTAMPTZ(3),
    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_deliveries_status_check" CHECK ("status" IN ('pending', 'delivered', 'failed')),
    CONSTRAINT "webhook_deliveries_webhook_id_fkey" FOREIGN KEY ("webhook_id") REFERENCES "webhooks"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "webhook_deliveries_webhook_id_event_id_key" ON "webhook_deliveries"("webhook_id", "event_id");
CREATE INDEX "webhook_deliveries_webhook_id_created_at_idx" ON "webhook_deliveries"("webhook_id", "created_at");
-- The sender's queue: only what is still to deliver.
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries"("next_attempt_at") WHERE "status" = 'pending';

-- The instance owner may let webhooks reach private addresses (a receiver on the same network).
ALTER TABLE "instance_settings" ADD COLUMN "webhooks_private_ok" BOOLEAN NOT NULL DEFAULT false;
