-- What the step that found the team's budget reached needed (team/budget.ts): the room and the
-- notification say what a step needs beside what is left. Set with budget_stopped_at, cleared with it.
ALTER TABLE "teams" ADD COLUMN "budget_need_tokens" BIGINT, ADD COLUMN "budget_need_cost_nanos" BIGINT;
