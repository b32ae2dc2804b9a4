import { createDb, type DatabaseUrls, type Db } from "../db/client";
import type { Person } from "../people/person";
import { asSessionId, type SessionId } from "../ids";
import { ActivityHub } from "../live/activity";
import { ModelChoiceSchema } from "../models/choice";
import type { ModelResolver } from "../models/registry";
import { ScriptedModel, type Playbook } from "../models/scripted";
import { DEFAULT_SYSTEM_PROMPT, type RuntimeConfig } from "../runtime/config";
import type { ContextRegistry } from "../runtime/context-registry";
import type { SessionEvent } from "../runtime/events";
import { createTeamLayer, type TeamLayerOptions } from "../team-layer";
import { Runtime, type RuntimeOptions } from "../runtime/runtime";
import { readEventsAfter } from "../runtime/session-log";
import { createSession } from "../runtime/sessions";
import { createTeam } from "../team/person-actions";

// A runtime wired to a test database the way server/main.ts wires the real one, with a
// fast scripted model and short timings.

export const TEST_CONFIG: RuntimeConfig = {
  idleEvictMs: 60_000,
  leaseTtlMs: 2_000,
  recoveryIntervalMs: 250,
  compactionBudgetTokens: 1_000_000,
  // The keyless Lead takes 11 to 13 steps for its team's first round (a wait and a look at the
  // board per wake), more when a loaded machine wakes it more often.
  maxStepsPerTurn: 64,
  deltaFlushMs: 10,
  systemPrompt: DEFAULT_SYSTEM_PROMPT,
};

export interface TestRuntime {
  db: Db;
  hub: ActivityHub;
  runtime: Runtime;
  logs: string[];
  stop(): Promise<void>;
}

export interface TestRuntimeOptions {
  config?: Partial<RuntimeConfig>;
  delayMs?: number;
  playbook?: Playbook;
  resolveModel?: ModelResolver;
  /** The price table, as server/main.ts passes it (`(c) => priceOf(env, c)`). */
  priceOf?: RuntimeOptions["priceOf"];
  contextFor?: (id: SessionId) => ContextRegistry;
  onClaimed?: RuntimeOptions["onClaimed"];
  /** Wire the Agent Teams layer (nine tools, identity, mailbox hooks) as the app does. */
  team?: TeamLayerOptions | true;
}

export async function startTestRuntime(database: DatabaseUrls, opts: TestRuntimeOptions = {}): Promise<TestRuntime> {
  const db = createDb(database, 5);
  const hub = new ActivityHub(database);
  await hub.start();
  const logs: string[] = [];
  const model = new ScriptedModel({ delayMs: opts.delayMs ?? 0, playbook: opts.playbook });
  const team = opts.team ? createTeamLayer(db, hub, opts.team === true ? { provisioningGraceMs: 5_000 } : opts.team) : null;
  const runtime = new Runtime({
    db,
    hub,
    config: { ...TEST_CONFIG, ...opts.config },
    resolveModel: opts.resolveModel ?? (() => model),
    priceOf: opts.priceOf,
    ...team,
    ...(opts.contextFor ? { contextFor: opts.contextFor } : {}),
    ...(opts.onClaimed ? { onClaimed: opts.onClaimed } : {}),
    log: (line) => logs.push(line),
  });
  await runtime.start();
  return {
    db,
    hub,
    runtime,
    logs,
    async stop() {
      await runtime.stop();
      await hub.close();
      await db.$disconnect();
    },
  };
}

/**
 * A runtime that never runs (stopped before it started): wake-ups are no-ops and queued prompts
 * stay queued, so a test of procedures sees a database nothing else writes to.
 */
export async function inertRuntime(db: Db, hub: ActivityHub): Promise<Runtime> {
  const runtime = new Runtime({ db, hub, config: TEST_CONFIG, resolveModel: () => new ScriptedModel({ delayMs: 0 }), log: () => undefined });
  await runtime.stop();
  return runtime;
}

/** A keyless Lead session; with `owner`, that person owns its team (as if they created it in the app). */
export async function newTestSession(db: Db, title = "test", owner?: Person): Promise<SessionId> {
  const model = ModelChoiceSchema.parse({ provider: "scripted", model: "keyless" });
  const s = owner ? await createTeam(db, { title, model, by: owner }) : await createSession(db, { title, model });
  return asSessionId(s.id);
}

/**
 * vi.waitFor until `check` returns a truthy value (a throwing check is retried too); fails with
 * the last value, or the last error, after `timeoutMs`.
 */
export async function waitFor<T>(check: () => Promise<T> | T, timeoutMs = 10_000, what = "condition"): Promise<NonNullable<T>> {
  // Imported here: child processes (mailbox-process.ts) load this module and must not load vitest.
  const { vi } = await import("vitest");
  return vi.waitFor(
    async () => {
      const last = await check();
      if (!last) throw new Error(`Timed out waiting for ${what}; last value: ${JSON.stringify(last)}`);
      return last as NonNullable<T>;
    },
    { timeout: timeoutMs, interval: 20 },
  );
}

export function eventsOf(db: Db, id: SessionId): Promise<SessionEvent[]> {
  return readEventsAfter(db, id, 0);
}

export function kinds(events: SessionEvent[]): string[] {
  return events.map((e) => e.payload.kind);
}

export function turnEnds(events: SessionEvent[]) {
  return events.flatMap((e) => (e.payload.kind === "turn_end" ? [e.payload] : []));
}

/** Waits until the session has `n` ended turns and no active one. */
export async function waitForTurns(db: Db, id: SessionId, n: number, timeoutMs = 10_000) {
  return waitFor(
    async () => {
      const events = await eventsOf(db, id);
      const row = await db.session.findUniqueOrThrow({ where: { id }, select: { activeTurnId: true } });
      return turnEnds(events).length >= n && row.activeTurnId === null ? events : null;
    },
    timeoutMs,
    `${n} completed turns of ${id}`,
  );
}
