// The product's size and count limits (plain numbers, no imports: the browser's input hints
// read them too). Sizes of free text (prompts, messages, descriptions)
// are UTF-8 bytes, what Postgres stores and the network carries; short labels (names,
// subjects) count characters. The team limits an operator may change are fed by the
// environment (env.ts); the others are part of the contract (docs/SPEC.md) and fixed.

export const KiB = 1024;

export const LIMITS = {
  /** A human prompt, a teammate's first task (spawn prompt), and by default a team message. */
  promptBytes: 64 * KiB,
  /** A teammate's one-line description. */
  memberDescriptionChars: 500,
  /** A person's note with an approval or a denial, and an answer to an agent's question. */
  decisionNoteChars: 2_000,
  answerChars: 4_000,
  /** Notifications per page of a person's inbox (and in its live feed). */
  notificationPage: 50,
  webhookUrlChars: 2_000,
  /** A memory's text (UTF-8 bytes), its tags, and a tag's length. */
  memoryTextBytes: 2 * KiB,
  memoryTags: 8,
  memoryTagChars: 40,
  /** The most memories one search returns (and one context section holds). */
  memorySearchResults: 20,
  /** The most tokens of an agent's context a team may give its memories (the table's check says the same). */
  memoryContextTokens: 4_000,
  /** The most tasks a plan decision names (a board holds far fewer live tasks). */
  maxTasksPerPlanView: 1_000,
  /** A tool's name, as a policy names it (built-in names are short; MCP names are prefixed). */
  toolNameChars: 128,
  webhooksPerTeam: 10,
  mcpServersPerTeam: 20,
  /** An MCP tool result as the model reads it; a longer one is cut, with a note saying so. */
  mcpResultChars: 24_000,
  /** How long an MCP tool call may take before it ends as a readable timeout. */
  mcpCallTimeoutMs: 60_000,
  /** The longest a team may let approvals and questions wait before they expire (30 days). */
  approvalExpiryMaxMinutes: 43_200,
  /** Teammate names (names.ts) and the names a tool or request may address. */
  memberNameChars: 64,
  /** A person's display name (docs/SPEC.md §13). */
  displayNameChars: 64,
  /** A person's profile image URL (http or https), and email address. */
  imageUrlChars: 2048,
  emailChars: 254,
  /** The User-Agent kept on a sign-in session row (the rest is cut). */
  userAgentChars: 512,
  /** Sign-in attempts on one account before each further one waits (1 s, doubling, at most the second figure) unless made from an address that signed in to it before. */
  signInFreeAttempts: 5,
  signInBackoffMaxSeconds: 900,
  /** A request body to /api/auth (sign-in, sign-up, profile). */
  authBodyBytes: 64 * KiB,
  /** A personal API token's label. */
  tokenNameChars: 64,
  routineNameChars: 80,
  routinesPerTeam: 50,
  /** Runs a routine's history shows, newest first. */
  routineRunsShown: 50,
  /** Open (unused, unexpired, unrevoked) invite links per team, and API tokens per person. */
  openInvitesPerTeam: 50,
  /** The most people one invite link may let in. */
  inviteMaxUses: 500,
  apiTokensPerPerson: 50,
  /** Passwords (Better Auth checks them; the pages hint the same bounds). */
  passwordMinChars: 8,
  passwordMaxChars: 128,
  taskSubjectChars: 200,
  taskDescriptionBytes: 16 * KiB,
  writeScopesPerTask: 64,
  dependenciesPerTask: 1024,
  taskListDefault: 50,
  taskListMax: 100,
  /** Team messages in one page (the room's live state shows the first page of this size). */
  messageListDefault: 200,
  messageListMax: 500,
  /** A session's (a Lead's) title. */
  sessionTitleChars: 200,
  /** wait_agent's timeout range and default. */
  waitMinMs: 10_000,
  waitMaxMs: 3_600_000,
  waitDefaultMs: 30_000,
  /** Team timeline entries in one page (the room opens with the newest page). */
  timelinePageDefault: 100,
  timelinePageMax: 500,
  /** The excerpt of a prompt or team message a timeline entry shows, in characters. */
  timelineExcerptChars: 200,
  /** Files in one workspace listing page, and matches in one search. */
  workspaceListDefault: 200,
  workspaceListMax: 1000,
  workspaceSearchDefault: 50,
  workspaceSearchMax: 200,
  /** A tool's read returns at most this many bytes of whole lines (and says there is more). */
  workspaceReadBytes: 256 * KiB,
  /** A search result line is cut to this many characters. */
  workspaceMatchChars: 400,
  /** A search pattern. */
  workspacePatternChars: 1000,
  /** Sessions or teams listed in one request. */
  listDefault: 100,
  listMax: 500,
} as const;

/** The team limits an operator may tune (TEAM_* variables in env.ts). */
export interface TeamLimits {
  /** Teammates per team, failed ones included (the Lead is not counted). */
  maxMembers: number;
  /** Live (non-deleted) tasks per board. */
  maxTasks: number;
  /** UTF-8 bytes of one team message. */
  maxMessageBytes: number;
  /** Messages to one target that are queued, or delivered but not yet consumed. */
  maxPending: number;
}

export const DEFAULT_TEAM_LIMITS: Readonly<TeamLimits> = {
  maxMembers: 8,
  maxTasks: 256,
  maxMessageBytes: LIMITS.promptBytes,
  maxPending: 64,
};

export function teamLimits(overrides: Partial<TeamLimits> = {}): TeamLimits {
  return { ...DEFAULT_TEAM_LIMITS, ...overrides };
}

/** The workspace limits an operator may tune (WORKSPACE_* variables in env.ts; SPEC.md §14). */
export interface WorkspaceLimits {
  /** UTF-8 bytes of one file. */
  maxFileBytes: number;
  /** Live files in one workspace. */
  maxFiles: number;
  /** UTF-8 bytes of all live files of one workspace (history is not counted). */
  maxBytes: number;
}

/** The largest file size an operator may allow (and so the most any request may carry). */
export const WORKSPACE_FILE_BYTES_CEILING = 16 * 1024 * KiB;

export const DEFAULT_WORKSPACE_LIMITS: Readonly<WorkspaceLimits> = {
  maxFileBytes: 1024 * KiB,
  maxFiles: 10_000,
  maxBytes: 64 * 1024 * KiB,
};

export function workspaceLimits(overrides: Partial<WorkspaceLimits> = {}): WorkspaceLimits {
  return { ...DEFAULT_WORKSPACE_LIMITS, ...overrides };
}
