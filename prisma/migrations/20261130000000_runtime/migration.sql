-- CreateTable
CREATE TABLE "sessions" (
    "id" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "model" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'inactive',
    "last_seq" INTEGER NOT NULL DEFAULT 0,
    "active_turn_id" TEXT,
    "parked" BOOLEAN NOT NULL DEFAULT false,
    "abort_request" TEXT,
    "optional_context" BOOLEAN NOT NULL DEFAULT true,
    "lease_owner" TEXT,
    "lease_token" INTEGER NOT NULL DEFAULT 0,
    "lease_expires_at" TIMESTAMPTZ(3),
    "forked_from_id" TEXT,
    "forked_from_seq" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "sessions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "session_events" (
    "session_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "turn_id" TEXT,
    "message_id" TEXT,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "session_events_pkey" PRIMARY KEY ("session_id","seq")
);

-- CreateTable
CREATE TABLE "inbox_items" (
    "session_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "position" SERIAL NOT NULL,
    "mode" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "source" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "inbox_items_pkey" PRIMARY KEY ("session_id","id")
);

-- CreateIndex
CREATE INDEX "sessions_lease_expires_at_idx" ON "sessions"("lease_expires_at");

-- CreateIndex
CREATE INDEX "sessions_updated_at_idx" ON "sessions"("updated_at");

-- CreateIndex
CREATE UNIQUE INDEX "session_events_session_id_message_id_key" ON "session_events"("session_id", "message_id");

-- CreateIndex
CREATE INDEX "inbox_items_session_id_position_idx" ON "inbox_items"("session_id", "position");

-- AddForeignKey
ALTER TABLE "session_events" ADD CONSTRAINT "session_events_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "inbox_items" ADD CONSTRAINT "inbox_items_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;
