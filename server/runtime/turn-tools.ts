import type { SqlRunner } from "../db/sql";
import type { SessionId, TurnId } from "../ids";
import type { ToolCall, ToolSpec } from "../models/types";
import type { ToolMode } from "./approvals";
import type { ModelStepScope } from "./model-step";
import { appendEvents, assertLeaseHeld } from "./session-log";
import { runTool, toolCallKey, toolSpec, type ToolDefinition, type ToolsetOptions } from "./tools";
import { toolResultEvent } from "./turn-close";

// A resident agent's tools for the turn, and running one: its own list plus the turn's (teams:
// MCP servers'), under the team's policy. `off` tools leave the list the model sees (every member's alike); a
// tool the policy does not name has its default mode.

export class TurnTools {
  /** The tools the model may call this turn. */
  on = new Map<string, ToolDefinition>();
  modes: ReadonlyMap<string, ToolMode> = new Map();
  /** Every tool of the turn's list, `off` ones too (what recovery asks). */
  listed = new Map<string, ToolDefinition>();
  specs: ToolSpec[] = [];
  /** The specs' JSON length, for a step's estimated size. */
  specsChars = 2;

  constructor(
    private readonly own: ToolDefinition[],
    readonly options: ToolsetOptions | undefined,
  ) {}

  /** Reads the policy and the turn's tools (as each turn starts). */
  async read(
    db: SqlRunner,
    sessionId: SessionId,
    hooks: {
      toolModes?: (db: SqlRunner, sessionId: SessionId) => Promise<ReadonlyMap<string, ToolMode>>;
      turnTools?: (db: SqlRunner, sessionId: SessionId) => Promise<ToolDefinition[]>;
    },
  ): Promise<void> {
    const [policy, more] = await Promise.all([hooks.toolModes?.(db, sessionId), hooks.turnTools?.(db, sessionId)]);
    const all = more?.length ? [...this.own, ...more] : this.own;
    const modes = new Map<string, ToolMode>();
    for (const t of all) modes.set(t.name, policy?.get(t.name) ?? t.defaultMode ?? "allow");
    this.modes = modes;
    this.listed = new Map(all.map((t) => [t.name, t]));
    const on = all.filter((t) => modes.get(t.name) !== "off");
    this.on = new Map(on.map((t) => [t.name, t]));
    this.specs = on.map(toolSpec);
    this.specsChars = JSON.stringify(this.specs).length;
  }

  /** One tool call, executed at most once; its result is in the log when this returns. */
  async run(scope: ModelStepScope, turnId: TurnId, assistantMessageId: string, call: ToolCall, signal: AbortSignal): Promise<void> {
    const { svc, sessionId, lease, journal } = scope;
    const hook = svc.afterToolEffect;
    const run = await runTool(
      this.on,
      call.toolName,
      call.input,
      {
        db: svc.db,
        sessionId,
        turnId,
        callKey: toolCallKey(assistantMessageId, call.toolCallId),
        signal,
        record: (tx, outcome) => appendEvents(tx, sessionId, [toolResultEvent(turnId, call, outcome)], lease),
        fence: (tx) => assertLeaseHeld(tx, sessionId, lease),
        afterEffect: hook ? (name, key) => hook(sessionId, name, key) : undefined,
      },
      this.options,
    );
    if (run.recorded) journal.committed(run.recorded);
    else await journal.append([toolResultEvent(turnId, call, run)]);
  }
}
