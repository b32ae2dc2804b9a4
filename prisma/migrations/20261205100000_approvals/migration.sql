-- People in control (SPEC.md §17): each team's tool policy, and approvals and questions that
-- park a turn until a person decides or answers.

-- A tool's mode in one team: allow | ask | off. No row: the tool's default.
CREATE TABLE "tool_policies" (
    "team_id" TEXT NOT NULL,
    "tool_name" TEXT NOT NULL,
    "mode" TEXT NOT NULL,
    "changed_by" JSONB NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "tool_policies_pkey" PRIMARY KEY ("team_id", "tool_name"),
    CONSTRAINT "tool_policies_mode_check" CHECK ("mode" IN ('allow', 'ask', 'off'))
);

-- One tool call a person must approve (kind approval) or a question they must answer (kind
-- question). The call key ties it to exactly one call; the first decision wins.
CREATE TABLE "approvals" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "session_id" TEXT NOT NULL,
    "turn_id" TEXT NOT NULL,
    "tool_call_key" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "tool_name" TEXT NOT NULL,
    "arguments" JSONB NOT NULL,
    "task_ids" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "status" TEXT NOT NULL DEFAULT 'pending',
    "decided_by" JSONB,
    "note" TEXT,
    "answer" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "decided_at" TIMESTAMPTZ(3),
    CONSTRAINT "approvals_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "approvals_kind_check" CHECK ("kind" IN ('approval', 'question')),
    CONSTRAINT "approvals_status_check" CHECK ("status" IN ('pending', 'approved', 'denied', 'answered', 'cancelled', 'expired'))
);
CREATE UNIQUE INDEX "approvals_tool_call_key_key" ON "approvals"("tool_call_key");
CREATE INDEX "approvals_session_id_idx" ON "approvals"("session_id");
-- What waits for people in a team: only the few pending rows.
CREATE INDEX "approvals_team_pending_idx" ON "approvals"("team_id", "created_at") WHERE "status" = 'pending';

-- A team may let requests expire: a pending one older than this ends as expired (a denial).
ALTER TABLE "teams" ADD COLUMN "approval_expiry_minutes" INTEGER;

-- A parked agent: its turn is open, and no driver runs it until a person decides or answers.
ALTER TABLE "sessions" ADD COLUMN "waiting_for" TEXT;
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_waiting_for_check" CHECK ("waiting_for" IN ('approval', 'answer'));
