import { z } from "zod";
import { inTx, type Db, type Tx } from "../db/client";
import type { SqlRunner } from "../db/sql";
import { isAppError, toolErrorOutput, type AppErrorCode } from "../errors";
import type { SessionId, TurnId } from "../ids";
import { findUnstorableText } from "../../shared/input-guard";
import type { ToolSpec } from "../models/types";
import type { ToolMode } from "./approvals";
import type { SessionEvent } from "./events";

// A tool: zod input, declared result schema, and an execute function. The runtime validates
// the model's arguments; a bad argument or a failed tool becomes a tool error the model reads,
// and the turn goes on.
//
// Effectively once (docs/DECISIONS.md, "Tool effects and results are one fact"): a tool whose
// durable effect is one transaction runs it through `ctx.commit`, which appends the tool_result
// in that same transaction, fenced by the lease. A tool whose effect spans transactions tags
// its first durable row with `ctx.callKey` and implements `recover`, which a driver that finds
// the call without a result (after a crash) uses to finish the work and report what happened.

/** The part of a tool context the runtime provides for one call. */
export interface ToolCallScope {
  db: Db;
  sessionId: SessionId;
  turnId: TurnId;
  /** Unique per call in the whole database: the assistant message id and the model's call id. */
  callKey: string;
  signal: AbortSignal;
  /** Appends this call's tool_result inside `tx` (fenced); absent outside a driver (tests). */
  record?: (tx: SqlRunner, outcome: ToolOutcome) => Promise<SessionEvent[]>;
  /**
   * Inside a multi-transaction tool's first durable transaction: throws LEASE_LOST unless this
   * driver still holds the lease, so a driver that lost it cannot create an effect that the new
   * driver's recovery already judged absent. Absent outside a driver.
   */
  fence?: (tx: SqlRunner) => Promise<void>;
  /** Test seam: runs after a tool's first durable commit, before its result is reported. */
  afterEffect?: (toolName: string, callKey: string) => Promise<void>;
}

export interface ToolContext extends ToolCallScope {
  /** Runs the effect in one transaction together with the tool_result that reports it. */
  commit<T>(effect: (tx: Tx) => Promise<T>): Promise<T>;
  /** For multi-transaction tools: call after the first durable commit (a test seam). */
  effectCommitted(): Promise<void>;
}

export interface ToolDefinition<I = unknown, O = unknown> {
  name: string;
  description: string;
  input: z.ZodType<I>;
  /**
   * The JSON schema the model is shown, for tools described by one (MCP tools: `input` then
   * validates against it); unset, it is derived from `input`.
   */
  inputJsonSchema?: Record<string, unknown>;
  /** The mode the tool has where the team's policy does not name it; unset, `allow`. */
  defaultMode?: ToolMode;
  output: z.ZodType<O>;
  execute(input: I, ctx: ToolContext): Promise<O>;
  /**
   * The call is a question to people (`ask_humans`): the turn parks until one answers, and the
   * answer is the result; `execute` never runs (runtime/waiting-calls.ts).
   */
  asksPeople?: true;
  /**
   * The real result of a call whose effect committed but whose result never reached the log,
   * finishing the effect where that needs no model call; null when the effect never happened.
   * Throws an AppError when the truth is an error the model should read (MCP: outcome unknown).
   */
  recover?(callKey: string, ctx: ToolCallScope): Promise<O | null>;
}

/** Two ids make one key: model call ids are only unique within a reply. */
export function toolCallKey(assistantMessageId: string, toolCallId: string): string {
  return `${assistantMessageId}/${toolCallId}`;
}

/** The assistant message of a key toolCallKey wrote (message ids hold no `/`), or null. */
export function assistantMessageIdOfCallKey(key: string): string | null {
  const at = key.indexOf("/");
  return at > 0 ? key.slice(0, at) : null;
}

/** Erases the generic parameters so tools of different types fit in one list. */
export function defineTool<I, O>(tool: ToolDefinition<I, O>): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

export interface ToolOutcome {
  output: unknown;
  isError: boolean;
  errorCode?: AppErrorCode;
}

/** What runTool did: the outcome, and the log events if the result was already recorded. */
export interface ToolRun extends ToolOutcome {
  recorded: SessionEvent[] | null;
}

export function toolSpec(tool: ToolDefinition): ToolSpec {
  if (tool.inputJsonSchema) return { name: tool.name, description: tool.description, inputSchema: tool.inputJsonSchema };
  const schema = z.toJSONSchema(tool.input, { io: "input" }) as Record<string, unknown>;
  delete schema.$schema;
  return { name: tool.name, description: tool.description, inputSchema: schema };
}

/**
 * What a call that has no result in the log really did, from the tool's own records: its
 * result, an error the tool reports (an AppError from `recover`), or null when the effect never
 * happened (or the tool keeps no records).
 */
export async function recoveredOutcome(tool: ToolDefinition | undefined, scope: ToolCallScope): Promise<ToolOutcome | null> {
  if (!tool?.recover) return null;
  try {
    const real = await tool.recover(scope.callKey, scope);
    return real === null ? null : { output: tool.output.parse(real), isError: false };
  } catch (e) {
    if (!isAppError(e) || e.code === "LEASE_LOST") throw e;
    return errorOutcome(e.code, e.message);
  }
}

/** A failed call's outcome (an AppError refusal or a runtime code). */
function errorOutcome(code: AppErrorCode, message: string): ToolOutcome {
  return { output: toolErrorOutput(code, message), isError: true, errorCode: code };
}

export interface ToolsetOptions {
  /** The code used when the model's arguments fail validation (team tools use their own). */
  invalidInputCode: AppErrorCode;
}

const DEFAULT_OPTIONS: ToolsetOptions = { invalidInputCode: "TOOL_INVALID_INPUT" };
const failed = (code: AppErrorCode, message: string): ToolRun => ({ ...errorOutcome(code, message), recorded: null });

/** The call's tool and its validated input, or the tool error the model reads instead. */
export function prepareToolCall(
  tools: ReadonlyMap<string, ToolDefinition>,
  name: string,
  rawInput: unknown,
  opts: ToolsetOptions = DEFAULT_OPTIONS,
): { tool: ToolDefinition; input: unknown } | ToolRun {
  const tool = tools.get(name);
  if (!tool) return failed("TOOL_NOT_FOUND", `No tool named "${name}". Available: ${[...tools.keys()].join(", ")}`);
  let input: unknown = rawInput;
  if (typeof rawInput === "string") {
    try {
      input = JSON.parse(rawInput);
    } catch {
      return failed(opts.invalidInputCode, `Arguments for ${name} are not valid JSON: ${rawInput.slice(0, 200)}`);
    }
  }
  const unstorable = findUnstorableText(input, "arguments");
  if (unstorable) return failed(opts.invalidInputCode, `Invalid arguments for ${name}: ${unstorable}`);
  const parsed = tool.input.safeParse(input ?? {});
  if (!parsed.success) return failed(opts.invalidInputCode, `Invalid arguments for ${name}: ${z.prettifyError(parsed.error)}`);
  return { tool, input: parsed.data };
}

export async function runTool(
  tools: ReadonlyMap<string, ToolDefinition>,
  name: string,
  rawInput: unknown,
  scope: ToolCallScope,
  opts: ToolsetOptions = DEFAULT_OPTIONS,
): Promise<ToolRun> {
  const fail = failed;
  const prepared = prepareToolCall(tools, name, rawInput, opts);
  if ("recorded" in prepared) return prepared;
  const { tool } = prepared;
  const parsed = { data: prepared.input };
  const state: { recorded: { output: unknown; events: SessionEvent[] } | null } = { recorded: null };
  const effectCommitted = () => scope.afterEffect?.(name, scope.callKey) ?? Promise.resolve();
  const ctx: ToolContext = {
    ...scope,
    effectCommitted,
    async commit(effect) {
      if (state.recorded) throw new Error(`${name} committed its effect twice in one call`);
      const done = await inTx(scope.db, async (tx) => {
        const value = await effect(tx);
        const output = tool.output.parse(value);
        return { value, output, events: (await scope.record?.(tx, { output, isError: false })) ?? [] };
      });
      state.recorded = { output: done.output, events: done.events };
      await effectCommitted();
      return done.value;
    },
  };
  try {
    const output = tool.output.parse(await tool.execute(parsed.data, ctx));
    const { recorded } = state;
    return { output: recorded ? recorded.output : output, isError: false, recorded: recorded?.events ?? null };
  } catch (e) {
    // The effect and its result are in the log already: that is the truth, whatever came after.
    const { recorded } = state;
    if (recorded) return { output: recorded.output, isError: false, recorded: recorded.events };
    if (isAppError(e, "LEASE_LOST")) throw e;
    if (isAppError(e)) return fail(e.code, e.message);
    // Not a refusal: part of a multi-transaction effect may have committed. Report what did
    // happen; if that cannot be read either, the turn fails and crash recovery asks again.
    const real = await recoveredOutcome(tool, scope);
    if (real) return { ...real, recorded: null };
    if (scope.signal.aborted) throw e;
    return fail("TOOL_FAILED", `${name} failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}
