// One error type with stable codes. tRPC maps it to a typed error (see server/trpc/init.ts);
// tools turn it into a tool error the model can read (see server/runtime/tools.ts).

/**
 * Every stable code, with the tRPC code it maps to. Beside each: when it is thrown and how a
 * caller reacts. Codes reach people as `data.appCode` on tRPC errors, and models as
 * `{ error: { code, message } }` tool results (docs/SPEC.md §12 for the TEAM_* codes).
 */
export const ERROR_CODES = {
  // --- Requests (tRPC) ---------------------------------------------------------------
  /** The input failed its zod schema or the input guard. Fix the input; nothing was persisted. */
  INVALID_INPUT: "BAD_REQUEST",
  /** More calls in one HTTP batch than the server takes (MAX_BATCH_SIZE). Split the batch. */
  BATCH_TOO_LARGE: "BAD_REQUEST",
  /** No procedure at the requested path. A client bug: do not retry. */
  PROCEDURE_NOT_FOUND: "NOT_FOUND",
  /** A failure that is not the caller's; details stay in the server log. Retry later. */
  INTERNAL: "INTERNAL_SERVER_ERROR",
  /** The database is unreachable for a moment (HTTP 503 with Retry-After). Retry after that many seconds. */
  UNAVAILABLE: "SERVICE_UNAVAILABLE",

  // --- People and access (docs/SPEC.md §13) -------------------------------------------------
  /** No signed-in person (no session cookie, or an unknown API token). Sign in. */
  UNAUTHORIZED: "UNAUTHORIZED",
  /** The person's role does not allow this (a viewer acting, a member managing people). */
  FORBIDDEN: "FORBIDDEN",
  /** A state-changing request from another origin, or for a host this server does not serve. */
  CROSS_SITE_REQUEST: "FORBIDDEN",
  /** The person is not (or no longer) in that team. Re-read the people list. */
  PERSON_NOT_FOUND: "NOT_FOUND",
  /** The change would leave the team without an owner. Make someone else owner first. */
  LAST_OWNER: "CONFLICT",
  /** The invite link is unknown, used, revoked or expired. Ask for a new one. */
  INVITE_NOT_FOUND: "NOT_FOUND",
  /** No such API token of yours. Re-list your tokens. */
  API_TOKEN_NOT_FOUND: "NOT_FOUND",
  /** Too many open invite links or API tokens (LIMITS). Revoke some first; nothing was made. */
  PEOPLE_LIMIT: "CONFLICT",

  // --- Sessions and the runtime ------------------------------------------------------
  /** No session with that id. Re-list sessions. */
  SESSION_NOT_FOUND: "NOT_FOUND",
  /** The queued prompt was claimed, edited away or removed meanwhile. Re-read the queue. */
  QUEUE_ITEM_NOT_FOUND: "NOT_FOUND",
  /** "Steer now" needs a running turn; the prompt stays queued. Wait for the next turn. */
  STEER_UNAVAILABLE: "CONFLICT",
  /** The chosen provider or model is not configured on this server. Pick one it lists. */
  MODEL_UNAVAILABLE: "BAD_REQUEST",
  /** A fork point outside the source session's log. Pick an existing seq. */
  FORK_POINT_INVALID: "BAD_REQUEST",
  /** This process no longer holds the agent's lease; another driver owns it. Stop driving. */
  LEASE_LOST: "CONFLICT",

  // --- Tool calls (model-facing) -------------------------------------------------------
  /** The model named a tool it does not have. The model picks from the listed tools. */
  TOOL_NOT_FOUND: "BAD_REQUEST",
  /** The model's arguments are not valid JSON or fail the tool's schema (built-in tools). */
  TOOL_INVALID_INPUT: "BAD_REQUEST",
  /** The tool failed for a reason that is not a refusal (and no effect committed). Retry or move on. */
  TOOL_FAILED: "INTERNAL_SERVER_ERROR",
  /** The tool never ran: the turn was cut (Stop, interrupt, crash) before it. Call it again if still wanted. */
  INTERRUPTED: "CLIENT_CLOSED_REQUEST",
  /** A person denied the call (the message names them and their note). Do not retry it unchanged. */
  TOOL_DENIED: "FORBIDDEN",

  // --- Approvals and questions (SPEC.md §17) ----------------------------------------------
  /** No approval or question with this id in this team (or it is not the caller's to see). */
  APPROVAL_NOT_FOUND: "NOT_FOUND",
  /** Someone decided or answered first (or the turn was stopped); the details say how it ended. */
  APPROVAL_NOT_PENDING: "CONFLICT",
  WEBHOOK_NOT_FOUND: "NOT_FOUND",
  PLAN_NOT_FOUND: "NOT_FOUND",

  // --- Team memory (SPEC.md §20) -----------------------------------------------------------
  /** No memory with this id that the caller may see. */
  MEMORY_NOT_FOUND: "NOT_FOUND",
  /** The memory is no longer in the state the action needs (someone decided first, or it was deleted); the details say its status and who. */
  MEMORY_CONFLICT: "CONFLICT",

  // --- Routines (SPEC.md §21) ---------------------------------------------------------------
  /** No routine with this id in this team. */
  ROUTINE_NOT_FOUND: "NOT_FOUND",
  /** The schedule does not parse or never runs; `field` names what to fix (cron, timeZone, every). */
  ROUTINE_INVALID_SCHEDULE: "BAD_REQUEST",
  /** A secret was given for an MCP server but the instance has no MCP_SECRETS_KEY to encrypt it with. */
  MCP_SECRETS_KEY_MISSING: "PRECONDITION_FAILED",
  /** A stored MCP secret does not decrypt with the instance's key. */
  MCP_SECRET_UNREADABLE: "PRECONDITION_FAILED",
  MCP_SERVER_NOT_FOUND: "NOT_FOUND",
  /** The team already has an MCP server of that name, or LIMITS.mcpServersPerTeam of them. */
  MCP_SERVER_CONFLICT: "CONFLICT",
  /** An MCP call whose request went out but whose answer never came back: it may or may not have taken effect. */
  MCP_OUTCOME_UNKNOWN: "INTERNAL_SERVER_ERROR",
  /** The MCP server could not be reached, so the call was not sent. */
  MCP_SERVER_UNAVAILABLE: "SERVICE_UNAVAILABLE",
  /** The MCP server answered the call with an error (its text is the message). */
  MCP_TOOL_ERROR: "BAD_REQUEST",
  /** The audit log is read by the instance owner and team owners only; this person is neither. */
  AUDIT_FORBIDDEN: "FORBIDDEN",
  /** A team's agent called, through this instance's own MCP server, the team it belongs to. */
  MCP_LOOP_REFUSED: "FORBIDDEN",
  /** The plan's tasks changed after the person read it; read it again before deciding. */
  PLAN_CHANGED: "CONFLICT",
  /** A webhook or MCP server URL whose host is a private address, while the instance does not allow them. */
  PRIVATE_ADDRESS: "BAD_REQUEST",
  /** A team already has LIMITS.webhooksPerTeam webhooks; remove one first. */
  WEBHOOK_LIMIT: "CONFLICT",

  // --- Agent Teams (docs/SPEC.md §12) ------------------------------------------------------
  /** No team with that id (a teammate's session id is no team id). Re-list teams. */
  TEAM_NOT_FOUND: "NOT_FOUND",
  /** Only the Lead may do this (spawn, interrupt). */
  TEAM_LEAD_REQUIRED: "FORBIDDEN",
  /** The caller is not an active member of the team it acts in. */
  TEAM_NOT_MEMBER: "FORBIDDEN",
  /** Teammate names are lowercase kebab-case, 1–64 characters, not `lead`/`unowned`. */
  TEAM_INVALID_MEMBER_NAME: "BAD_REQUEST",
  /** Names are unique for the team's life (failed members keep theirs). Choose another. */
  TEAM_MEMBER_NAME_TAKEN: "CONFLICT",
  /** The team holds its maximum number of teammates. */
  TEAM_MEMBER_LIMIT: "CONFLICT",
  /** No member by that name. list_agents shows the team. */
  TEAM_MEMBER_NOT_FOUND: "NOT_FOUND",
  /** A member messaged itself. */
  TEAM_SELF_MESSAGE: "BAD_REQUEST",
  /** The target has too many unread messages. Wait for it to catch up; nothing was queued. */
  TEAM_MAILBOX_FULL: "TOO_MANY_REQUESTS",
  /** The message exceeds the size limit (UTF-8 bytes). Shorten it. */
  TEAM_MESSAGE_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  /** The target exists but cannot take this (provisioning/failed member, the Lead for interrupt). */
  TEAM_INVALID_TARGET: "BAD_REQUEST",
  /** wait_agent's timeout_ms is out of range. */
  TEAM_INVALID_TIMEOUT: "BAD_REQUEST",
  /** wait_agent was cut short by Stop, interrupt or shutdown. */
  TEAM_WAIT_ABORTED: "CLIENT_CLOSED_REQUEST",
  /** A Team tool's (or board procedure's) arguments are invalid; nothing was persisted. */
  TEAM_INVALID_ARGUMENT: "BAD_REQUEST",
  /** No such task on the board (ids look like task-<n>). */
  TEAM_TASK_NOT_FOUND: "NOT_FOUND",
  /** The task moved on since the revision the caller saw. Re-read it and decide again. */
  TEAM_TASK_STALE_REVISION: "CONFLICT",
  /** The task is deleted: its tombstone never changes, and it cannot be a dependency. */
  TEAM_TASK_DELETED: "CONFLICT",
  /** The task waits for unfinished blockers. Complete them first. */
  TEAM_TASK_BLOCKED: "PRECONDITION_FAILED",
  /** The task belongs to a plan that waits for a person's approval (or was sent back for revision). */
  TEAM_TASK_PLAN_PENDING: "PRECONDITION_FAILED",
  /** Another member owns the task. */
  TEAM_TASK_ALREADY_CLAIMED: "CONFLICT",
  /** Only the task's owner or the Lead may do this (reassign: the Lead only). */
  TEAM_TASK_UNAUTHORIZED: "FORBIDDEN",
  /** The action does not apply in the task's current status. */
  TEAM_TASK_INVALID_TRANSITION: "PRECONDITION_FAILED",
  /** Other live tasks list this one as a blocker; change them first. */
  TEAM_TASK_HAS_DEPENDENTS: "PRECONDITION_FAILED",
  /** The new dependencies would form a cycle (the message shows it). */
  TEAM_TASK_DEPENDENCY_CYCLE: "BAD_REQUEST",
  /** The board holds its maximum number of live tasks. Delete some first. */
  TEAM_TASK_LIMIT: "CONFLICT",
  /** A write scope is not a valid relative path prefix. */
  TEAM_INVALID_WRITE_SCOPE: "BAD_REQUEST",
  /** A member's provisioning changed under the caller (another process settled it). Re-read the roster. */
  TEAM_PROVISIONING_CONFLICT: "CONFLICT",
  // The team workspace (docs/SPEC.md §14).
  /** A file path or prefix breaks the path rules (workspace/paths.ts), or a file and a directory would share a name. */
  WORKSPACE_PATH_INVALID: "BAD_REQUEST",
  /** No live file at that path (or no such version). List the workspace first. */
  WORKSPACE_NOT_FOUND: "NOT_FOUND",
  /** The content is larger than one file may be; split it. */
  WORKSPACE_FILE_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  /** The workspace holds its maximum number of files or bytes; delete some first. */
  WORKSPACE_FULL: "CONFLICT",
  /** The file changed since the version the caller saw (the message has the current one); read it again. */
  WORKSPACE_STALE_VERSION: "CONFLICT",
  /** An edit's old_text is not in the file. Read the file and copy the text exactly. */
  WORKSPACE_EDIT_NOT_FOUND: "PRECONDITION_FAILED",
  /** An edit's old_text matches more than once; include more context or set replace_all. */
  WORKSPACE_EDIT_NOT_UNIQUE: "PRECONDITION_FAILED",
  /** A search's regular expression does not compile (PostgreSQL's syntax). */
  WORKSPACE_INVALID_PATTERN: "BAD_REQUEST",
} as const;

export type AppErrorCode = keyof typeof ERROR_CODES;

export class AppError extends Error {
  override readonly name = "AppError";
  constructor(
    readonly code: AppErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export function isAppError(e: unknown, code?: AppErrorCode): e is AppError {
  return e instanceof AppError && (code === undefined || e.code === code);
}

/** What a model reads for a failed tool call: the stable code and a readable message. */
export function toolErrorOutput(code: AppErrorCode, message: string): { error: { code: AppErrorCode; message: string } } {
  return { error: { code, message } };
}
