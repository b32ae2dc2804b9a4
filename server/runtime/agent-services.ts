import type { Db } from "../db/client";
import { Prisma } from "../db/generated/client";
import type { SqlRunner } from "../db/sql";
import type { SessionId } from "../ids";
import type { Activity } from "../db/notify";
import type { Price } from "../models/catalog";
import type { ModelChoice } from "../models/choice";
import type { ModelResolver } from "../models/registry";
import type { RuntimeConfig } from "./config";
import type { ContextRegistry } from "./context-registry";
import type { SessionEvent } from "./events";
import type { StepReserver } from "./step-reserve";
import type { ToolDefinition, ToolsetOptions } from "./tools";
import type { ToolMode } from "./approvals";




// What a resident agent (agent.ts) is given: the database, its tools, context and model, and
// the hooks a team plugs in (teams: server/team-layer.ts).

export interface AgentServices {
  db: Db;
  config: RuntimeConfig;
  resolveModel: ModelResolver;
  /** The price table's entry for a model (models/catalog.ts); unset, steps cost nothing. */
  priceOf?: (choice: ModelChoice) => Price;
  toolsFor(sessionId: SessionId): { tools: ToolDefinition[]; options?: ToolsetOptions };
  contextFor(sessionId: SessionId): ContextRegistry;
  /**
   * A statement run in the claim's transaction after the claimed input entered the history
   * (teams record when mail was consumed).
   */
  onClaimed?: (sessionId: SessionId) => Prisma.Sql;
  /**
   * Just before a turn or a step starts: reserve its most against the spending limit (teams:
   * the team budget; runtime/step-reserve.ts). When it does not fit no turn starts, and a
   * running turn ends with reason `budget`.
   */
  reserveStep?: StepReserver;
  /**
   * After each commit that changes what the session shows (ActivityHub.announce): this
   * process's live feeds take an append's events without a read, other processes hear of it.
   */
  announce(activity: Activity<SessionEvent>): void;
  /**
   * The team's tool policy (runtime/approvals.ts): `off` tools leave the agent's list, `ask`
   * tools wait for a person's approval. Read as each turn starts; unset, every tool is allowed.
   */
  toolModes?: (db: SqlRunner, sessionId: SessionId) => Promise<ReadonlyMap<string, ToolMode>>;
  /**
   * Tools read as each turn starts, after `toolsFor`'s (teams: their MCP servers' tools, which
   * change while agents live); each brings its default mode for where the policy is silent.
   */
  turnTools?: (db: SqlRunner, sessionId: SessionId) => Promise<ToolDefinition[]>;
  /** The tasks the agent has in progress, named in what it asks people. */
  tasksInProgress?: (db: SqlRunner, sessionId: SessionId) => Promise<string[]>;
  /** A tool no longer in the list, for what its records tell of a call that has no result (teams: MCP calls). */
  recoveryTool?: (toolName: string) => ToolDefinition | undefined;
  /** Test seam: a tool's first durable commit happened, its result is not reported yet. */
  afterToolEffect?: (sessionId: SessionId, toolName: string, callKey: string) => Promise<void>;
  /** One log line, with where it comes from (server/log.ts fields) and how bad it is. */
  log(line: string, fields?: RuntimeLogFields): void;
}

export interface RuntimeLogFields {
  sessionId?: string;
  teamId?: string;
  turnId?: string;
  level?: "info" | "warn" | "error";
}
