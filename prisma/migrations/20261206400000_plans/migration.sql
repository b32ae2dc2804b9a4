-- Plan approval (SPEC.md §17): with the team setting on, the tasks the Lead creates in one turn
-- form a plan that waits for a person; its tasks cannot be claimed or assigned until approved.
ALTER TABLE "teams" ADD COLUMN "plan_approval" BOOLEAN NOT NULL DEFAULT false;

CREATE TABLE "plans" (
    "id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    -- The Lead's turn that proposed it.
    "turn_id" TEXT NOT NULL,
    -- pending | approved | revised
    "status" TEXT NOT NULL DEFAULT 'pending',
    "decided_by" JSONB,
    "note" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "decided_at" TIMESTAMPTZ(3),
    CONSTRAINT "plans_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "plans_status_check" CHECK ("status" IN ('pending', 'approved', 'revised'))
);
CREATE INDEX "plans_team_id_status_idx" ON "plans"("team_id", "status");

ALTER TABLE "team_tasks" ADD COLUMN "plan_id" TEXT;

ALTER TABLE "team_events" DROP CONSTRAINT "team_events_kind_check";
ALTER TABLE "team_events" ADD CONSTRAINT "team_events_kind_check" CHECK ("kind" IN ('approval.requested', 'question.asked', 'plan.proposed', 'team.finished', 'agent.failed', 'budget.reached', 'mention'));
