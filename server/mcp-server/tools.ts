import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { isAppError } from "../errors";
import type { createCaller } from "../trpc/root";

// The product as an MCP server (SPEC.md §18): each tool is one call of the tRPC API made
// in-process for the token's person, so the authorisation, validation and typed errors are the
// API's own (a stranger's team is not found here either). Refusals are tool errors that name the
// stable code; nothing here reads or writes the database by itself.

type Caller = ReturnType<typeof createCaller>;

// Input is only typed here: its rules (lengths, ranges) are the API's, checked by the procedure.
const teamId = z.string().describe("The team's id (its Lead's session id), as list_teams gives it");
const sessionId = z.string().describe("An agent's session id (the roster gives each member's)");

function ok(value: unknown): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }] };
}

/** A refusal as the model or person reads it: the stable code, then the message. */
function refused(e: unknown): CallToolResult {
  if (isAppError(e)) return { isError: true, content: [{ type: "text", text: `${e.code}: ${e.message}` }] };
  if (e instanceof TRPCError) {
    const code = isAppError(e.cause) ? e.cause.code : e.code;
    return { isError: true, content: [{ type: "text", text: `${code}: ${e.message}` }] };
  }
  throw e;
}

async function run(call: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    return ok(await call());
  } catch (e) {
    return refused(e);
  }
}

/**
 * Refuses (MCP_LOOP_REFUSED) an action on the team that is making the call: a team that added
 * this instance's own MCP server may drive other teams, never itself.
 */
export type LoopGuard = (target: { teamId: string } | { sessionId: string }) => Promise<void>;

export function buildMcpServer(caller: Caller, version: string, guard: LoopGuard = async () => undefined): McpServer {
  const server = new McpServer({ name: "agent-teams", version });
  const onSession = <T>(sessionId: string, call: () => Promise<T>) => run(async () => (await guard({ sessionId }), call()));
  const onTeam = <T>(teamId: string, call: () => Promise<T>) => run(async () => (await guard({ teamId }), call()));
  const read = { readOnlyHint: true } as const;

  server.registerTool("list_teams", { description: "The teams you belong to, with your role in each", annotations: read }, () => run(() => caller.team.list()));
  server.registerTool(
    "create_team",
    { description: "Create a team: its Lead starts idle; prompt it next", inputSchema: { title: z.string() } },
    ({ title }) => run(() => caller.session.create({ title })),
  );
  server.registerTool(
    "prompt",
    { description: "Queue a prompt for an agent (each prompt is its own turn)", inputSchema: { session_id: sessionId, text: z.string() } },
    ({ session_id, text }) => onSession(session_id, () => caller.session.prompt({ sessionId: session_id, text })),
  );
  server.registerTool(
    "steer",
    {
      description: "Send text into the agent's running turn (it reads it at its next step); queued as a prompt when no turn runs",
      inputSchema: { session_id: sessionId, text: z.string() },
    },
    ({ session_id, text }) =>
      onSession(session_id, async () => {
        const item = await caller.session.prompt({ sessionId: session_id, text });
        try {
          await caller.session.steerNow({ sessionId: session_id, itemId: item.id });
          return { steered: true, itemId: item.id };
        } catch (e) {
          // The prompt is queued whatever the steer's refusal: the answer says so.
          if (e instanceof TRPCError) return { steered: false, queued: true, itemId: item.id, why: e.message };
          throw e;
        }
      }),
  );
  server.registerTool("stop", { description: "Stop an agent's running turn", inputSchema: { session_id: sessionId } }, ({ session_id }) =>
    onSession(session_id, () => caller.session.stop({ sessionId: session_id })),
  );
  server.registerTool("roster", { description: "The team's agents with their status and spend", inputSchema: { team_id: teamId }, annotations: read }, ({ team_id }) =>
    run(() => caller.team.roster({ teamId: team_id })),
  );
  server.registerTool(
    "transcript",
    {
      description: "A page of an agent's transcript (events), newest last; page back with before_seq",
      inputSchema: { session_id: sessionId, before_seq: z.number().int().optional(), limit: z.number().int().optional() },
      annotations: read,
    },
    ({ session_id, before_seq, limit }) => run(() => caller.session.transcript({ sessionId: session_id, beforeSeq: before_seq, limit: limit ?? 50 })),
  );
  server.registerTool("task_board", { description: "The team's tasks", inputSchema: { team_id: teamId }, annotations: read }, ({ team_id }) =>
    run(() => caller.team.tasks({ teamId: team_id })),
  );
  server.registerTool(
    "list_files",
    { description: "The team workspace's files", inputSchema: { team_id: teamId, prefix: z.string().optional() }, annotations: read },
    ({ team_id, prefix }) => run(() => caller.workspace.list({ teamId: team_id, prefix, limit: 200 })),
  );
  server.registerTool(
    "read_file",
    { description: "One workspace file's content", inputSchema: { team_id: teamId, path: z.string() }, annotations: read },
    ({ team_id, path }) => run(() => caller.workspace.read({ teamId: team_id, path })),
  );
  server.registerTool(
    "pending_requests",
    { description: "Tool calls waiting for approval and questions waiting for an answer in a team", inputSchema: { team_id: teamId }, annotations: read },
    ({ team_id }) => run(() => caller.approvals.pending({ teamId: team_id })),
  );
  server.registerTool(
    "decide",
    {
      description: "Approve or deny a tool call waiting for approval; the agent reads the decision and your note",
      inputSchema: { team_id: teamId, approval_id: z.string(), approve: z.boolean(), note: z.string().optional() },
    },
    ({ team_id, approval_id, approve, note }) => onTeam(team_id, () => caller.approvals.decide({ teamId: team_id, approvalId: approval_id, approve, note })),
  );
  server.registerTool(
    "answer",
    { description: "Answer an agent's question", inputSchema: { team_id: teamId, approval_id: z.string(), answer: z.string() } },
    ({ team_id, approval_id, answer }) => onTeam(team_id, () => caller.approvals.answer({ teamId: team_id, approvalId: approval_id, answer })),
  );
  server.registerTool(
    "list_memories",
    {
      description: "A team's memories: the proposals waiting for a decision, or the approved ones, newest first",
      inputSchema: { team_id: teamId, status: z.enum(["proposed", "approved"]).default("proposed") },
      annotations: read,
    },
    ({ team_id, status }) => run(() => caller.memory.list({ teamId: team_id, status })),
  );
  server.registerTool(
    "decide_memory",
    {
      description: "Approve (as proposed, or with edited text and tags) or reject a proposed memory, with an optional note; the first decision wins",
      inputSchema: {
        team_id: teamId,
        memory_id: z.string(),
        approve: z.boolean(),
        note: z.string().optional(),
        text: z.string().optional().describe("Approve it with this text instead"),
        tags: z.array(z.string()).optional(),
      },
    },
    ({ team_id, memory_id, approve, note, text, tags }) =>
      onTeam(team_id, () => caller.memory.decide({ teamId: team_id, memoryId: memory_id, approve, note, ...(text !== undefined ? { edit: { text, tags: tags ?? [] } } : {}) })),
  );
  server.registerTool(
    "list_routines",
    { description: "A team's routines: scheduled prompts to its Lead, with their schedules and next run times", inputSchema: { team_id: teamId }, annotations: read },
    ({ team_id }) => run(() => caller.routines.list({ teamId: team_id })),
  );
  server.registerTool(
    "create_routine",
    {
      description:
        "Create a routine: your prompt to the team's Lead on a schedule, either a five-field cron expression read in an IANA time zone, or every N minutes or hours",
      inputSchema: {
        team_id: teamId,
        name: z.string(),
        prompt: z.string(),
        cron: z.string().optional().describe('A five-field cron expression, e.g. "0 9 * * 1-5"'),
        time_zone: z.string().optional().describe("The cron's IANA time zone, e.g. Europe/Berlin (default UTC)"),
        every: z.number().int().optional().describe("Instead of cron: run every this many units"),
        unit: z.enum(["minutes", "hours"]).optional(),
        missed: z.enum(["skip", "run_once"]).default("skip").describe("A time missed while the server was down"),
        overlap: z.enum(["skip", "queue"]).default("skip").describe("A time that comes while the previous run still works"),
      },
    },
    ({ team_id, name, prompt, cron, time_zone, every, unit, missed, overlap }) =>
      onTeam(team_id, () =>
        caller.routines.create({
          teamId: team_id,
          name,
          prompt,
          schedule: cron !== undefined ? { kind: "cron", cron, timeZone: time_zone ?? "UTC" } : { kind: "interval", every: every ?? 0, unit: unit ?? "hours" },
          missed,
          overlap,
        }),
      ),
  );
  server.registerTool(
    "run_routine",
    { description: "Run a routine now, whatever its schedule", inputSchema: { team_id: teamId, routine_id: z.string() } },
    ({ team_id, routine_id }) => onTeam(team_id, () => caller.routines.runNow({ teamId: team_id, routineId: routine_id })),
  );
  return server;
}
