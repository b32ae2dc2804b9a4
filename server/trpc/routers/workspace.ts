import { z } from "zod";
import { workspaceLimitsOf } from "../../env";
import {
  ChangeResultSchema,
  deleteFile,
  fileHistory,
  FileContentSchema,
  FilePageSchema,
  listFiles,
  readFile,
  SearchResultSchema,
  searchFiles,
  VersionViewSchema,
  WorkspaceInput as W,
  writeFile,
  type Writer,
} from "../../workspace";
import { int4String } from "../../../shared/input-guard";
import { filesReader } from "../../live/feed-readers";
import { TEAM_FEED_REREAD_MS } from "../../live/team-feed";
import { feedAccess, teamAccess, type Access } from "../access";
import { personProcedure, router } from "../init";
import { liveFeed } from "../live-feed";
import { TeamRef } from "../schemas";

// The Files view's API (docs/SPEC.md §14). Reading needs any role in the team; writing needs
// owner or member, sends the version the person saw (a stale one is WORKSPACE_STALE_VERSION,
// never an overwrite), and is recorded with the person. Downloads are plain HTTP
// (server/http/downloads.ts).

const asPerson = (by: Access): Writer => ({ kind: "person", actor: by });

export const workspaceRouter = router({
  /**
   * The live listing: every live file, then only what each change changed (new heads, deleted
   * paths). Its id is the change number; a reconnect with it gets only the changes since.
   */
  live: personProcedure
    .input(TeamRef.extend({ lastEventId: int4String.nullish() }))
    .subscription(async ({ ctx, input, signal }) => {
      const { teamId } = await teamAccess(ctx, input.teamId, "view");
      const access = () => feedAccess(ctx, (db) => teamAccess(ctx, teamId, "view", db));
      const open = () => filesReader(ctx, teamId, input.lastEventId ? Number(input.lastEventId) : null);
      return liveFeed(ctx, { teamId, access, open, signal, recheckMs: TEAM_FEED_REREAD_MS });
    }),

  list: personProcedure
    .input(TeamRef.extend({ prefix: W.prefix.optional(), cursor: W.cursor.optional(), limit: W.listLimit.optional() }))
    .output(FilePageSchema)
    .query(async ({ ctx, input }) => {
      const { teamId, ...q } = input;
      return listFiles(ctx.db, (await teamAccess(ctx, teamId, "view")).teamId, q);
    }),

  /** The whole file (no read limit: the Files view shows it all), at its head or at `version`. */
  read: personProcedure
    .input(TeamRef.extend({ path: W.path, version: W.version.optional() }))
    .output(FileContentSchema)
    .query(async ({ ctx, input }) =>
      readFile(ctx.db, (await teamAccess(ctx, input.teamId, "view")).teamId, { path: input.path, version: input.version }),
    ),

  /** Newest first, up to 1000 a page; `beforeVersion` pages back. */
  history: personProcedure
    .input(TeamRef.extend({ path: W.path, beforeVersion: W.version.optional() }))
    .output(z.array(VersionViewSchema))
    .query(async ({ ctx, input }) =>
      fileHistory(ctx.db, (await teamAccess(ctx, input.teamId, "view")).teamId, input.path, { beforeVersion: input.beforeVersion }),
    ),

  search: personProcedure
    .input(
      TeamRef.extend({ query: W.query, regex: z.boolean().optional(), ignoreCase: z.boolean().optional(), prefix: W.prefix.optional(), limit: W.searchLimit.optional() }),
    )
    .output(SearchResultSchema)
    .query(async ({ ctx, input }) => {
      const { teamId, ...q } = input;
      return searchFiles(ctx.db, (await teamAccess(ctx, teamId, "view")).teamId, q);
    }),

  /** Creates (expectedVersion 0) or replaces a file. */
  write: personProcedure
    .input(TeamRef.extend({ path: W.path, content: W.content, expectedVersion: W.expectedVersion }))
    .output(ChangeResultSchema)
    .mutation(async ({ ctx, input }) => {
      const by = await teamAccess(ctx, input.teamId, "act");
      return writeFile(ctx.db, by.teamId, asPerson(by), input, workspaceLimitsOf(ctx.env));
    }),

  delete: personProcedure
    .input(TeamRef.extend({ path: W.path, expectedVersion: W.expectedVersion }))
    .output(ChangeResultSchema)
    .mutation(async ({ ctx, input }) => {
      const by = await teamAccess(ctx, input.teamId, "act");
      return deleteFile(ctx.db, by.teamId, asPerson(by), input, workspaceLimitsOf(ctx.env));
    }),
});
