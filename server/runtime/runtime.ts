import { randomBytes } from "node:crypto";
import type { Db } from "../db/client";
import { asSessionId, type SessionId } from "../ids";
import type { ActivityBus } from "../db/notify";
import type { SessionEvent } from "./events";
import type { Price } from "../models/catalog";
import type { ModelChoice } from "../models/choice";
import type { ModelResolver } from "../models/registry";
import { AgentDriver } from "./agent";
import type { AgentServices } from "./agent-services";
import type { RuntimeConfig } from "./config";
import { ContextRegistry, dateContextProvider } from "./context-registry";
import { builtinTools } from "./builtin-tools";
import { acquireLease, findOrphanedSessions, releaseLease, renewLeases } from "./lease";
import type { ToolMode } from "./approvals";
import type { ToolDefinition, ToolsetOptions } from "./tools";

// The process-level host of agents: which agents this process drives, waking them on input,
// heartbeats for their leases, and the recovery sweep that adopts agents nobody drives
// (crashed processes, input for inactive agents).

export interface RuntimeOptions {
  db: Db;
  /** The process's activity bus (live/activity.ts's hub): announcements out, wake-ups in. */
  hub: ActivityBus<SessionEvent>;
  config: RuntimeConfig;
  resolveModel: ModelResolver;
  /** The price table (models/catalog.ts): what a step of each model costs; unset, steps cost nothing. */
  priceOf?: (choice: ModelChoice) => Price;
  /** Tools per agent; defaults to the built-in tools (teams plug in their nine tools). */
  toolsFor?: (sessionId: SessionId) => { tools: ToolDefinition[]; options?: ToolsetOptions };
  /** Runtime-context registry per agent; defaults to the built-in date provider. */
  contextFor?: (sessionId: SessionId) => ContextRegistry;
  onClaimed?: AgentServices["onClaimed"];
  /** Spending limits (teams: the team budget), checked at turn starts and step boundaries. */
  reserveStep?: AgentServices["reserveStep"];
  /** The tool policy (teams: per team), read as each turn starts; unset, every tool is allowed. */
  toolModes?: AgentServices["toolModes"];
  /** Tools read as each turn starts (teams: their MCP servers'), after `toolsFor`'s. */
  turnTools?: AgentServices["turnTools"];
  recoveryTool?: AgentServices["recoveryTool"];
  tasksInProgress?: AgentServices["tasksInProgress"];
  /** Test seam (crash tests): after a tool's first durable commit, before its result. */
  afterToolEffect?: AgentServices["afterToolEffect"];
  /** Test seam (multi-process tests): the agents this process may drive; unset, any. */
  drives?: (sessionId: SessionId) => Promise<boolean>;
  /** The shared system prompt, instead of config.systemPrompt (teams add their policy). */
  systemPrompt?: string;
  /** Runs at the start of every recovery sweep (teams settle provisioning, redeliver mail). */
  onRecover?: () => Promise<void>;
  /** Runs at the end of a graceful stop (teams close their MCP connections). */
  onStop?: () => Promise<void>;
  log?: AgentServices["log"];
}

export class Runtime {
  readonly ownerId = `proc-${process.pid}-${randomBytes(4).toString("hex")}`;
  private readonly drivers = new Map<string, AgentDriver>();
  /** Adoptions under way (lease being taken): stop() waits for them. */
  private readonly acquiring = new Map<string, Promise<void>>();
  private readonly services: AgentServices;
  private timers: NodeJS.Timeout[] = [];
  private offActivity: (() => void) | null = null;
  private stopped = false;

  constructor(private readonly opts: RuntimeOptions) {
    this.services = {
      db: opts.db,
      config: opts.systemPrompt === undefined ? opts.config : { ...opts.config, systemPrompt: opts.systemPrompt },
      resolveModel: opts.resolveModel,
      priceOf: opts.priceOf,
      toolsFor: opts.toolsFor ?? (() => ({ tools: builtinTools })),
      contextFor: opts.contextFor ?? (() => new ContextRegistry([dateContextProvider])),
      onClaimed: opts.onClaimed,
      reserveStep: opts.reserveStep,
      toolModes: opts.toolModes,
      turnTools: opts.turnTools,
      recoveryTool: opts.recoveryTool,
      tasksInProgress: opts.tasksInProgress,
      afterToolEffect: opts.afterToolEffect,
      announce: (activity) => opts.hub.announce(activity),
      log: opts.log ?? ((line) => console.log(`[runtime] ${line}`)),
    };
  }

  /** The tool list every team starts from (every agent's is the same), before any policy. */
  toolNames(): string[] {
    return this.toolNamesFor(asSessionId(""));
  }

  /** The names of an agent's fixed tool list (toolsFor), before the policy. */
  toolNamesFor(sessionId: SessionId): string[] {
    return this.services.toolsFor(sessionId).tools.map((t) => t.name);
  }

  /** An agent's whole tool list as its next turn reads it, before the policy, with each tool's default mode. */
  async toolCatalog(sessionId: SessionId): Promise<{ name: string; defaultMode: ToolMode }[]> {
    const more = (await this.services.turnTools?.(this.opts.db.sql, sessionId)) ?? [];
    return [...this.services.toolsFor(sessionId).tools, ...more].map((t) => ({ name: t.name, defaultMode: t.defaultMode ?? "allow" }));
  }

  /** Starts heartbeats and recovery, and adopts agents left without a driver. */
  async start(): Promise<void> {
    this.offActivity = this.opts.hub.on("*", (a) => {
      // A LISTEN reconnect: hints sent meanwhile are gone, so every agent looks at its inbox again.
      if (a.sessionId === "*") {
        for (const driver of this.drivers.values()) driver.wake();
        return void this.recover();
      }
      if (a.kind === "inbox") void this.wake(asSessionId(a.sessionId));
      else if (a.kind === "abort") void this.drivers.get(a.sessionId)?.checkAbortRequest();
    });
    const { leaseTtlMs, recoveryIntervalMs } = this.opts.config;
    this.timers.push(setInterval(() => void this.heartbeat(), Math.max(50, Math.floor(leaseTtlMs / 3))));
    if (recoveryIntervalMs > 0) this.timers.push(setInterval(() => void this.recover(), recoveryIntervalMs));
    await this.recover();
  }

  /** Agents this process drives right now. */
  residentIds(): string[] {
    return [...this.drivers.keys()];
  }

  /**
   * Input may be waiting for this agent: wake its driver here, or take the lease and start
   * one (cold resume) when the agent has work and no live driver anywhere.
   */
  async wake(sessionId: SessionId): Promise<void> {
    if (this.stopped) return;
    const existing = this.drivers.get(sessionId);
    if (existing) return existing.wake();
    if (this.acquiring.has(sessionId)) return;
    const acquiring = this.adopt(sessionId);
    this.acquiring.set(sessionId, acquiring);
    try {
      await acquiring;
    } finally {
      this.acquiring.delete(sessionId);
    }
  }

  private async adopt(sessionId: SessionId): Promise<void> {
    try {
      if (this.opts.drives && !(await this.opts.drives(sessionId))) return;
      const lease = await acquireLease(this.opts.db.sql, sessionId, this.ownerId, this.opts.config.leaseTtlMs);
      if (!lease) return;
      // stop() ran while the lease was being taken: give it back, or it stays held for its TTL.
      if (this.stopped) return void (await releaseLease(this.opts.db.sql, sessionId, lease));
      const driver = new AgentDriver(this.services, sessionId, lease);
      this.drivers.set(sessionId, driver);
      driver.start(() => {
        if (this.drivers.get(sessionId) === driver) this.drivers.delete(sessionId);
        // Input that raced with an eviction must still find a driver.
        if (!this.stopped) void this.wake(sessionId);
      });
    } catch (e) {
      this.services.log(`wake ${sessionId} failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Asks this process's driver, if any, to look at a stop/interrupt request now. */
  async checkAbort(sessionId: SessionId): Promise<void> {
    await this.drivers.get(sessionId)?.checkAbortRequest();
  }

  /** Adopts every agent that needs a driver and has none alive. */
  async recover(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.opts.onRecover?.();
      for (const id of await findOrphanedSessions(this.opts.db.sql)) await this.wake(id);
    } catch (e) {
      this.services.log(`recovery sweep failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private async heartbeat(): Promise<void> {
    if (this.stopped || this.drivers.size === 0) return;
    try {
      // Only drivers that existed before the renewal: one that acquired its lease while the
      // UPDATE ran is missing from `held` without having lost anything.
      const drivers = [...this.drivers];
      const held = await renewLeases(this.opts.db.sql, this.ownerId, drivers.map(([id]) => id), this.opts.config.leaseTtlMs);
      for (const [id, driver] of drivers) if (!held.has(id)) void driver.shutdown("lease_lost");
    } catch (e) {
      this.services.log(`heartbeat failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Graceful stop: open turns end as interrupted, leases are released, inboxes stay. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.offActivity?.();
    // Adoptions under way end first (each gives back a lease it took after `stopped`), so no
    // lease is taken after the drivers' shutdown and left held.
    await Promise.all(this.acquiring.values());
    await Promise.all([...this.drivers.values()].map((d) => d.shutdown()));
    await this.opts.onStop?.();
  }
}
