// The kinds of audit entries (people/audit.ts): plain constants, no imports, so the browser's
// filter lists them too.

/** Team actions that change who may do what, or decide for the agents: these are audited. */
export const AUDITED_TEAM_ACTION_KINDS = [
  "team_created",
  "role_changed",
  "person_removed",
  "left",
  "joined",
  "invite_created",
  "invite_revoked",
  "budget_set",
  "tool_policy_set",
  "approval_decided",
  "question_answered",
  "plan_decided",
  "webhook_added",
  "webhook_removed",
  "mcp_server_added",
  "mcp_server_removed",
  "memory_decided",
  "memory_edited",
  "memory_deleted",
  "memory_settings_set",
  "routine_created",
  "routine_changed",
  "routine_deleted",
] as const;

/** memory_shared: the instance's owner shared a team memory with every team (memory/shared.ts). */
export const AUDIT_KINDS = ["signed_in", "sign_in_failed", "sso_linked", "api_token_created", "api_token_revoked", "memory_shared", ...AUDITED_TEAM_ACTION_KINDS] as const;
export type AuditKind = (typeof AUDIT_KINDS)[number];
