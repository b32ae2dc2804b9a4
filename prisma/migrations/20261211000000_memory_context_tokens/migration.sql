-- How much of each agent's context a team's approved memories may take (tokens; 0: none).
ALTER TABLE "teams" ADD COLUMN "memory_context_tokens" INTEGER NOT NULL DEFAULT 500
  CONSTRAINT "teams_memory_context_tokens_check" CHECK ("memory_context_tokens" BETWEEN 0 AND 4000);
