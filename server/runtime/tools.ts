import { z } from "zod";
import type { Db } from "../db/client";
import { isAppError } from "../errors";
import type { SessionId, TurnId } from "../ids";
import type { ToolSpec } from "../models/types";

// A tool: zod input, declared result schema, and an execute function. The runtime validates
// the model's arguments; a bad argument or a failed tool becomes a tool error the model reads,
// and the turn goes on.

export interface ToolContext {
  db: Db;
  sessionId: SessionId;
  turnId: TurnId;
  signal: AbortSignal;
}

export interface ToolDefinition<I = unknown, O = unknown> {
  name: string;
  description: string;
  input: z.ZodType<I>;
  output: z.ZodType<O>;
  execute(input: I, ctx: ToolContext): Promise<O>;
}

/** Erases the generic parameters so tools of different types fit in one list. */
export function defineTool<I, O>(tool: ToolDefinition<I, O>): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

/** A failure the model should read: stable code plus a readable message. */
export class ToolError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface ToolOutcome {
  output: unknown;
  isError: boolean;
  errorCode?: string;
}

export function toolSpec(tool: ToolDefinition): ToolSpec {
  const schema = z.toJSONSchema(tool.input, { io: "input" }) as Record<string, unknown>;
  delete schema.$schema;
  return { name: tool.name, description: tool.description, inputSchema: schema };
}

function errorOutcome(code: string, message: string): ToolOutcome {
  return { output: { error: { code, message } }, isError: true, errorCode: code };
}

export interface ToolsetOptions {
  /** The code used when the model's arguments fail validation (team tools use their own). */
  invalidInputCode: string;
}

export async function runTool(
  tools: ReadonlyMap<string, ToolDefinition>,
  name: string,
  rawInput: unknown,
  ctx: ToolContext,
  opts: ToolsetOptions = { invalidInputCode: "TOOL_INVALID_INPUT" },
): Promise<ToolOutcome> {
  const tool = tools.get(name);
  if (!tool) return errorOutcome("TOOL_NOT_FOUND", `No tool named "${name}". Available: ${[...tools.keys()].join(", ")}`);
  let input: unknown = rawInput;
  if (typeof rawInput === "string") {
    try {
      input = JSON.parse(rawInput);
    } catch {
      return errorOutcome(opts.invalidInputCode, `Arguments for ${name} are not valid JSON: ${rawInput.slice(0, 200)}`);
    }
  }
  const parsed = tool.input.safeParse(input ?? {});
  if (!parsed.success) {
    return errorOutcome(opts.invalidInputCode, `Invalid arguments for ${name}: ${z.prettifyError(parsed.error)}`);
  }
  try {
    const output = tool.output.parse(await tool.execute(parsed.data, ctx));
    return { output, isError: false };
  } catch (e) {
    if (e instanceof ToolError) return errorOutcome(e.code, e.message);
    if (isAppError(e)) return errorOutcome(e.code, e.message);
    if (ctx.signal.aborted) throw e;
    return errorOutcome("TOOL_FAILED", `${name} failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}
