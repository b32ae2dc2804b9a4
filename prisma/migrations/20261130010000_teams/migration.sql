-- AlterTable
ALTER TABLE "sessions" ADD COLUMN "team_id" TEXT,
ADD COLUMN "member_name" TEXT;

-- CreateTable
CREATE TABLE "teams" (
    "id" TEXT NOT NULL,
    "next_task_number" INTEGER NOT NULL DEFAULT 1,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "teams_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "team_members" (
    "team_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "session_id" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "context" TEXT NOT NULL,
    "phase" TEXT NOT NULL,
    "diagnostic" TEXT,
    "ordinal" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "team_members_pkey" PRIMARY KEY ("team_id","name")
);

-- CreateTable
CREATE TABLE "team_messages" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "seq" SERIAL NOT NULL,
    "sender_session_id" TEXT NOT NULL,
    "sender_name" TEXT NOT NULL,
    "target_session_id" TEXT NOT NULL,
    "target_name" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "delivered_at" TIMESTAMPTZ(3),
    "consumed_at" TIMESTAMPTZ(3),

    CONSTRAINT "team_messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "team_tasks" (
    "team_id" TEXT NOT NULL,
    "number" INTEGER NOT NULL,
    "revision" INTEGER NOT NULL DEFAULT 1,
    "subject" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "owner_session_id" TEXT,
    "blocked_by" TEXT[],
    "write_scopes" TEXT[],
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "team_tasks_pkey" PRIMARY KEY ("team_id","number")
);

-- CreateIndex
CREATE INDEX "sessions_team_id_idx" ON "sessions"("team_id");

-- CreateIndex
CREATE UNIQUE INDEX "team_members_session_id_key" ON "team_members"("session_id");

-- CreateIndex
CREATE INDEX "team_members_phase_idx" ON "team_members"("phase");

-- CreateIndex
CREATE INDEX "team_messages_target_session_id_state_seq_idx" ON "team_messages"("target_session_id", "state", "seq");

-- CreateIndex
CREATE INDEX "team_messages_team_id_seq_idx" ON "team_messages"("team_id", "seq");

-- CreateIndex
CREATE INDEX "team_tasks_team_id_status_idx" ON "team_tasks"("team_id", "status");
