-- Binding budgets: what a session's step in flight may still spend at most (its estimated
-- input plus its output limit), held against the team's budget until the step's reply is
-- recorded or its turn ends.
ALTER TABLE "sessions" ADD COLUMN "reserved_tokens" BIGINT NOT NULL DEFAULT 0;
ALTER TABLE "sessions" ADD COLUMN "reserved_cost_nanos" BIGINT NOT NULL DEFAULT 0;
