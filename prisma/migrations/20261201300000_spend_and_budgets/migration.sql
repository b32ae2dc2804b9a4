-- Real models in production (docs/SPEC.md §15): what each session has spent, and team budgets.
-- Spend is kept per session (incremented in the transaction that records a step's message),
-- so a team's spend is a sum over its few sessions and members never contend for one row.
-- Costs are integers in nano-USD (1e-9 $), so sums are exact.

-- AlterTable
ALTER TABLE "sessions" ADD COLUMN "spent_input_tokens" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN "spent_output_tokens" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN "spent_cached_tokens" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN "spent_cost_nanos" BIGINT NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "teams" ADD COLUMN "budget_tokens" BIGINT,
ADD COLUMN "budget_cost_nanos" BIGINT,
ADD COLUMN "budget_stopped_at" TIMESTAMPTZ(3);

-- What was spent before this migration (tokens only: no prices were known then). A fork's log
-- starts with copies of its source's messages (same message ids): those were spent once, by
-- the source, and are not counted again.
UPDATE "sessions" s SET
  "spent_input_tokens" = u.input,
  "spent_output_tokens" = u.output
FROM (
  SELECT e."session_id",
    COALESCE(SUM((e."payload"->'usage'->>'inputTokens')::bigint), 0) AS input,
    COALESCE(SUM((e."payload"->'usage'->>'outputTokens')::bigint), 0) AS output
  FROM "session_events" e JOIN "sessions" own ON own."id" = e."session_id"
  WHERE e."kind" = 'assistant_message'
    AND NOT EXISTS (
      SELECT 1 FROM "session_events" src
      WHERE src."session_id" = own."forked_from_id" AND src."message_id" = e."message_id")
  GROUP BY e."session_id"
) u
WHERE u."session_id" = s."id";
