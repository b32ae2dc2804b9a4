-- A notification of a memory proposal names the memory, so the inbox shows whether it still waits.
ALTER TABLE "notifications" ADD COLUMN "memory_id" TEXT;

ALTER TABLE "team_events" DROP CONSTRAINT "team_events_kind_check";
ALTER TABLE "team_events" ADD CONSTRAINT "team_events_kind_check" CHECK ("kind" IN ('approval.requested', 'question.asked', 'plan.proposed', 'team.finished', 'agent.failed', 'budget.reached', 'mention', 'memory.proposed'));
