-- The audit log (people/audit.ts): security-relevant actions, append-only. Sign-ins, API tokens,
-- and the team actions that change who may do what (roles, invitations, tool policy, MCP
-- servers, webhooks, budgets, approvals and their decisions). Rows are never changed or removed:
-- the trigger refuses it, whoever asks.
CREATE TABLE "audit_log" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "kind" TEXT NOT NULL,
    -- Who acted (null: not a known account, e.g. a failed sign-in) and their name or the email tried.
    "actor_id" TEXT,
    "actor_name" TEXT NOT NULL,
    -- The team it happened in (null: the person's own account).
    "team_id" TEXT,
    "detail" JSONB NOT NULL DEFAULT '{}',
    "ip" TEXT,
    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "audit_log_team_id_id_idx" ON "audit_log"("team_id", "id");

CREATE FUNCTION audit_log_append_only() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON "audit_log"
  FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
