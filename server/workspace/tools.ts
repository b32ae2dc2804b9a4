import { z } from "zod";
import { LIMITS, type WorkspaceLimits } from "../../shared/limits";
import { defineTool, type ToolCallScope, type ToolDefinition } from "../runtime/tools";
import { membershipOf } from "../members/membership";
import type { Writer } from "./authors";
import { listFiles, readFile, searchFiles } from "./reads";
import { SearchMatchSchema, WorkspaceInput as W, type Author, type ChangeResult } from "./schema";
import { deleteFile, editFile, writeFile } from "./store";

// The six Workspace tools (SPEC.md §14): the same list, byte for byte, for every member. The
// writer is the session running the tool, never model input. Each change runs inside
// `ctx.commit`, so it commits with the tool_result that reports it: a crash or a retry never
// applies it twice, and a change the model saw succeed is never lost. Refusals are
// WORKSPACE_* tool errors; results are compact JSON.

/** `researcher`, or `Ana (person)` for a person's version. */
const by = (a: Author): string => (a.kind === "member" ? a.name : `${a.name} (person)`);

const Change = z.object({
  path: z.string(),
  version: z.number().int(),
  bytes: z.number().int().optional(),
  unchanged: z.literal(true).optional(),
  deleted: z.literal(true).optional(),
  replacements: z.number().int().optional(),
  /** Write-scope warnings: the change was made; tell the other member or adjust your task. */
  warnings: z.array(z.string()).optional(),
});

function compactChange(r: ChangeResult): z.infer<typeof Change> {
  return {
    path: r.path,
    version: r.version,
    ...(r.deleted ? { deleted: true as const } : { bytes: r.bytes }),
    ...(r.unchanged ? { unchanged: true as const } : {}),
    ...(r.replacements !== undefined ? { replacements: r.replacements } : {}),
    ...(r.warnings.length > 0 ? { warnings: r.warnings } : {}),
  };
}

/** The agent running the tool, as the change's writer. */
async function writerOf(ctx: ToolCallScope): Promise<Extract<Writer, { kind: "member" }>> {
  return { kind: "member", member: await membershipOf(ctx.db.sql, ctx.sessionId) };
}

/** The Workspace tools that change files (a change that made a version is the file's timeline entry). */
export const FILE_CHANGE_TOOLS = { write: "workspace_write", edit: "workspace_edit", delete: "workspace_delete" } as const;

export function createWorkspaceTools(limits: WorkspaceLimits): ToolDefinition[] {
  return [
    defineTool({
      name: "workspace_list",
      description: "Lists the team's shared files at or under a prefix (a directory), with sizes, versions and who wrote each last.",
      input: z.object({ prefix: W.prefix.optional(), cursor: W.cursor.optional(), limit: W.listLimit.optional() }).strict(),
      output: z.object({
        files: z.array(z.object({ path: z.string(), bytes: z.number().int(), version: z.number().int(), by: z.string() })),
        next_cursor: z.string().optional(),
      }),
      async execute(input, ctx) {
        const me = await membershipOf(ctx.db.sql, ctx.sessionId);
        const page = await listFiles(ctx.db, me.teamId, input);
        return {
          files: page.files.map((f) => ({ path: f.path, bytes: f.bytes, version: f.version, by: by(f.author) })),
          ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}),
        };
      },
    }),
    defineTool({
      name: "workspace_read",
      description:
        "Reads a shared file with its version (lines are 1-based, the range inclusive). A read returns at most 256 KiB of whole lines: `truncated` says there is more; read on from end_line + 1.",
      input: z.object({ path: W.path, start_line: W.line.optional(), end_line: W.line.optional() }).strict(),
      output: z.object({
        path: z.string(),
        version: z.number().int(),
        by: z.string(),
        start_line: z.number().int(),
        end_line: z.number().int(),
        total_lines: z.number().int(),
        truncated: z.literal(true).optional(),
        content: z.string(),
      }),
      async execute(input, ctx) {
        const me = await membershipOf(ctx.db.sql, ctx.sessionId);
        const f = await readFile(ctx.db, me.teamId, { path: input.path, startLine: input.start_line, endLine: input.end_line, maxBytes: LIMITS.workspaceReadBytes });
        return {
          path: f.path,
          version: f.version,
          by: by(f.author),
          start_line: f.startLine,
          end_line: f.endLine,
          total_lines: f.totalLines,
          ...(f.truncated ? { truncated: true as const } : {}),
          content: f.content,
        };
      },
    }),
    defineTool({
      name: FILE_CHANGE_TOOLS.write,
      description:
        "Creates or replaces a shared file with the whole content. Pass expected_version (the version you read; 0 for a new file) to write only if nobody changed it meanwhile. Prefer workspace_edit for small changes.",
      input: z.object({ path: W.path, content: W.content, expected_version: W.expectedVersion.optional() }).strict(),
      output: Change,
      async execute(input, ctx) {
        const writer = await writerOf(ctx);
        const req = { path: input.path, content: input.content, expectedVersion: input.expected_version };
        return ctx.commit(async (tx) => compactChange(await writeFile(tx, writer.member.teamId, writer, req, limits)));
      },
    }),
    defineTool({
      name: FILE_CHANGE_TOOLS.edit,
      description:
        "Replaces old_text with new_text in a shared file. old_text must occur exactly once (include surrounding lines to make it unique), or set replace_all to replace every occurrence.",
      input: z.object({ path: W.path, old_text: W.oldText, new_text: W.newText, replace_all: z.boolean().optional() }).strict(),
      output: Change,
      async execute(input, ctx) {
        const writer = await writerOf(ctx);
        const req = { path: input.path, oldText: input.old_text, newText: input.new_text, replaceAll: input.replace_all };
        return ctx.commit(async (tx) => compactChange(await editFile(tx, writer.member.teamId, writer, req, limits)));
      },
    }),
    defineTool({
      name: FILE_CHANGE_TOOLS.delete,
      description: "Deletes a shared file at the version you saw (its history is kept; writing the path again creates it anew).",
      input: z.object({ path: W.path, expected_version: W.expectedVersion }).strict(),
      output: Change,
      async execute(input, ctx) {
        const writer = await writerOf(ctx);
        const req = { path: input.path, expectedVersion: input.expected_version };
        return ctx.commit(async (tx) => compactChange(await deleteFile(tx, writer.member.teamId, writer, req, limits)));
      },
    }),
    defineTool({
      name: "workspace_search",
      description:
        "Finds lines in the shared files: literal text, or a regular expression (PostgreSQL syntax) with regex: true; optionally only under a prefix. Results are capped.",
      input: z
        .object({ query: W.query, regex: z.boolean().optional(), ignore_case: z.boolean().optional(), prefix: W.prefix.optional(), limit: W.searchLimit.optional() })
        .strict(),
      output: z.object({ matches: z.array(SearchMatchSchema), truncated: z.literal(true).optional() }),
      async execute(input, ctx) {
        const me = await membershipOf(ctx.db.sql, ctx.sessionId);
        const r = await searchFiles(ctx.db, me.teamId, { query: input.query, regex: input.regex, ignoreCase: input.ignore_case, prefix: input.prefix, limit: input.limit });
        return { matches: r.matches, ...(r.truncated ? { truncated: true as const } : {}) };
      },
    }),
  ];
}
