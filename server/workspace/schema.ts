import { z } from "zod";
import { LIMITS, WORKSPACE_FILE_BYTES_CEILING } from "../../shared/limits";

// The workspace's shapes (SPEC.md §14): who wrote a version, what a listing, a read, a history
// entry and a change look like. The tools compact these; the router returns them as they are.

/** The author of a version: an agent (by member name; `lead` for the Lead) or a person. */
export const AuthorSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("member"), name: z.string(), sessionId: z.string() }),
  z.object({ kind: z.literal("person"), id: z.string(), name: z.string() }),
]);
export type Author = z.infer<typeof AuthorSchema>;

/** A live file in a listing: its head version. */
export const FileEntrySchema = z.object({
  path: z.string(),
  version: z.number().int(),
  bytes: z.number().int(),
  author: AuthorSchema,
  changedAt: z.date(),
});
export type FileEntry = z.infer<typeof FileEntrySchema>;

export const FilePageSchema = z.object({
  files: z.array(FileEntrySchema),
  /** Pass back as `cursor` for the next page; absent on the last one. */
  nextCursor: z.string().optional(),
});
export type FilePage = z.infer<typeof FilePageSchema>;

/** One version of a file (a deletion is a version too: `deleted`, no content). */
export const VersionViewSchema = z.object({
  path: z.string(),
  version: z.number().int(),
  /** The workspace-wide change number: the order of every change in the team. */
  change: z.number().int(),
  deleted: z.boolean(),
  bytes: z.number().int(),
  author: AuthorSchema,
  /** The tasks the author had in progress (an agent's; empty for people). */
  taskIds: z.array(z.string()),
  /** Write-scope warnings the change raised (advisory, SPEC.md §14). */
  warnings: z.array(z.string()),
  createdAt: z.date(),
});
export type VersionView = z.infer<typeof VersionViewSchema>;

/** What the timeline and feeds read: a version, in change order. */
export type FileChangeView = VersionView;

export const FileContentSchema = z.object({
  path: z.string(),
  version: z.number().int(),
  bytes: z.number().int(),
  content: z.string(),
  author: AuthorSchema,
  changedAt: z.date(),
  /** The lines returned (1-based, inclusive) and the file's total. */
  startLine: z.number().int(),
  endLine: z.number().int(),
  totalLines: z.number().int(),
  /** True when a read without a range stopped at the read limit: ask for the following lines. */
  truncated: z.boolean(),
});
export type FileContent = z.infer<typeof FileContentSchema>;

/** What a change did: the new head, and warnings (the model and the room both see them). */
export const ChangeResultSchema = z.object({
  path: z.string(),
  version: z.number().int(),
  change: z.number().int(),
  bytes: z.number().int(),
  deleted: z.boolean(),
  /** The content equals the current version's: nothing was written. */
  unchanged: z.boolean(),
  /** workspace_edit: how many occurrences were replaced. */
  replacements: z.number().int().optional(),
  warnings: z.array(z.string()),
});
export type ChangeResult = z.infer<typeof ChangeResultSchema>;

export const SearchMatchSchema = z.object({ path: z.string(), line: z.number().int(), text: z.string() });
export const SearchResultSchema = z.object({
  matches: z.array(SearchMatchSchema),
  /** More lines matched than were returned. */
  truncated: z.boolean(),
});
export type SearchResult = z.infer<typeof SearchResultSchema>;

/** The workspace's size now, for the room's header and the Files view's live refresh. */
export const WorkspaceSummarySchema = z.object({
  files: z.number().int(),
  bytes: z.number().int(),
  /** The newest change number: it moves on every change. */
  lastChange: z.number().int(),
});
export type WorkspaceSummary = z.infer<typeof WorkspaceSummarySchema>;

// Inputs shared by the tools and the router (their fields; each adds its own naming).
const version = z.number().int().min(0).max(2_147_483_647);
export const WorkspaceInput = {
  path: z.string().min(1).max(2048),
  prefix: z.string().max(2048),
  /** The configured file size limit is checked in bytes by the store; this bounds any request. */
  content: z.string().max(WORKSPACE_FILE_BYTES_CEILING),
  version,
  /** The version the writer saw; 0 means "there is no file at this path". */
  expectedVersion: version,
  cursor: z.string().max(2100),
  listLimit: z.number().int().min(1).max(LIMITS.workspaceListMax),
  line: z.number().int().min(1).max(2_147_483_647),
  oldText: z.string().min(1).max(WORKSPACE_FILE_BYTES_CEILING),
  newText: z.string().max(WORKSPACE_FILE_BYTES_CEILING),
  query: z.string().min(1).max(LIMITS.workspacePatternChars),
  searchLimit: z.number().int().min(1).max(LIMITS.workspaceSearchMax),
};

/** The Files view's live listing (shared/files-delta.ts says how it is applied). */
export const FilesMessageSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("files"), files: z.array(FileEntrySchema), lastChange: z.number().int() }),
  z.object({ type: z.literal("changes"), upsert: z.array(FileEntrySchema), removed: z.array(z.string()), lastChange: z.number().int() }),
]);
export type FilesMessage = z.infer<typeof FilesMessageSchema>;
