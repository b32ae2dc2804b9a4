import { expect } from "vitest";
import type { Db } from "../db/client";
import { asSessionId, type SessionId } from "../ids";
import { BUDGET_RESUME_NOTICE } from "../runtime/config";
import type { SessionEvent } from "../runtime/events";
import { findOrphanedSessions } from "../runtime/lease";
import { spendTokens } from "../../shared/model-text";
import { setBudget, teamBudget } from "../team/budget";
import { listTasks } from "../team/task-board";
import { eventsOf, waitFor } from "./runtime-harness";

// What the budget tests (in one process and across two) check of a team stopped at its budget
// and of its resumption: the keyless team scenario, stopped while both teammates run.

export async function teamSessions(db: Db, teamId: SessionId) {
  return db.session.findMany({ where: { teamId }, select: { id: true, memberName: true, activeTurnId: true }, orderBy: { createdAt: "asc" } });
}

/** Each turn the budget ended: it closed right after a step's end, and no reply was cut. */
export function budgetStops(events: SessionEvent[]): { turnId: string; atStepEnd: boolean; cutReply: boolean }[] {
  return events.flatMap((e, i) => {
    if (e.payload.kind !== "turn_end" || e.payload.reason !== "budget") return [];
    const turnId = e.payload.turnId;
    const prev = events[i - 1]?.payload;
    const cutReply = events.some((x) => x.payload.kind === "assistant_message" && x.payload.turnId === turnId && x.payload.interrupted);
    return [{ turnId, atStepEnd: prev?.kind === "step_end" && prev.turnId === turnId, cutReply }];
  });
}

/** A step in flight when the limit was set, started when the team had none: it runs uncapped (SPEC.md §17). */
type UncappedStep = { sessionId: string; turnId: string; step: number };

/**
 * Waits until both teammates are mid-turn, then lowers the token budget to just above the spend.
 * Returns the new limit and the most the team may end with: the spend and the steps in flight
 * (their reservations) as the lowering left them, and the steps in flight that started with no
 * limit (they reserved nothing: what they spend is allowed on top).
 */
export async function stopWhileTeammatesRun(
  db: Db,
  lead: SessionId,
  by: Parameters<typeof setBudget>[1],
): Promise<{ limit: number; most: number; uncapped: UncappedStep[] }> {
  await waitFor(
    async () => {
      const sessions = await teamSessions(db, lead);
      return sessions.filter((s) => s.memberName !== null && s.activeTurnId !== null).length === 2;
    },
    60_000,
    "both teammates running",
  );
  const { spent } = await teamBudget(db, lead);
  const limit = spendTokens(spent) + 1;
  await setBudget(db, by, { tokens: limit, costNanos: null });
  // Read after the set's commit: a step whose start committed later checked the limit (and
  // holds a reservation); one open here without a reservation and without its reply started
  // before it. (A step whose reply is in has settled its reservation into the spend read here,
  // while its tools may still run.)
  const rows = await db.$queryRaw<{ id: string; committed: bigint; reserved_tokens: bigint }[]>`SELECT id,
      (spent_input_tokens + spent_output_tokens + reserved_tokens)::bigint AS committed, reserved_tokens
    FROM sessions WHERE team_id = ${lead}`;
  const committed = rows.reduce((n, r) => n + Number(r.committed), 0);
  const uncapped: UncappedStep[] = [];
  for (const r of rows.filter((x) => Number(x.reserved_tokens) === 0)) {
    const events = await eventsOf(db, asSessionId(r.id));
    const last = events.findLast((e) => ["step_start", "assistant_message", "step_end"].includes(e.payload.kind))?.payload;
    if (last?.kind === "step_start") uncapped.push({ sessionId: r.id, turnId: last.turnId, step: last.step });
  }
  return { limit, most: Math.max(limit, committed), uncapped };
}

/** What the uncapped steps spent in the end (input and output of their replies). */
async function spentBy(db: Db, steps: readonly UncappedStep[]): Promise<number> {
  let tokens = 0;
  for (const s of steps) {
    for (const e of await eventsOf(db, asSessionId(s.sessionId))) {
      const p = e.payload;
      if (p.kind === "assistant_message" && p.turnId === s.turnId && p.step === s.step) tokens += p.usage.inputTokens + p.usage.outputTokens;
    }
  }
  return tokens;
}

/**
 * Every member idle with the team stopped, each running member stopped at a step boundary, and
 * the spend within the most the lowering allowed (its steps in flight finished, no other began).
 */
export async function expectStopped(db: Db, lead: SessionId, stoppedMembers: number, lowered: { most: number; uncapped: readonly UncappedStep[] }) {
  await waitFor(async () => (await teamSessions(db, lead)).every((s) => s.activeTurnId === null), 60_000, "every member stopped");
  const budget = await teamBudget(db, lead);
  expect(budget.reached).toBe(true);
  expect(budget.stoppedAt).not.toBeNull();
  expect(spendTokens(budget.spent)).toBeLessThanOrEqual(lowered.most + (await spentBy(db, lowered.uncapped)));
  let stopped = 0;
  for (const s of await teamSessions(db, lead)) {
    const stops = budgetStops(await eventsOf(db, asSessionId(s.id)));
    for (const stop of stops) expect(stop, `${s.memberName ?? "lead"} stopped at a step end`).toMatchObject({ atStepEnd: true, cutReply: false });
    if (stops.length > 0) {
      stopped += 1;
      // Its work waits: the resume notice (and any mail) is in its inbox, and nothing adopts it.
      expect(await db.inboxItem.count({ where: { sessionId: s.id, text: BUDGET_RESUME_NOTICE } })).toBe(1);
    }
  }
  expect(stopped).toBeGreaterThanOrEqual(stoppedMembers);
  const orphans = new Set(await findOrphanedSessions(db));
  for (const s of await teamSessions(db, lead)) expect(orphans.has(asSessionId(s.id))).toBe(false);
}

/** After the raise: the scenario finishes as it would have, each stopped turn resumed by its notice. */
export async function expectFinished(db: Db, lead: SessionId) {
  await waitFor(
    async () => {
      const ev = await eventsOf(db, lead);
      return ev.some((e) => e.payload.kind === "assistant_message" && e.payload.text.includes("Final answer")) ? ev : null;
    },
    120_000,
    "the Lead's final answer",
  );
  const { tasks } = await listTasks(db, lead, {});
  expect(tasks.map((t) => [t.id, t.status])).toEqual([
    ["task-1", "completed"],
    ["task-2", "completed"],
  ]);
  for (const s of await teamSessions(db, lead)) {
    const events = await eventsOf(db, asSessionId(s.id));
    for (const stop of budgetStops(events)) {
      // The turn after the stop starts from the notice, with the whole history before it.
      const end = events.findIndex((e) => e.payload.kind === "turn_end" && e.payload.turnId === stop.turnId);
      const next = events.slice(end + 1).find((e) => e.payload.kind === "user_message");
      expect(next?.payload).toMatchObject({ kind: "user_message", text: BUDGET_RESUME_NOTICE });
    }
  }
  expect(await db.inboxItem.count({ where: { sessionId: { in: (await teamSessions(db, lead)).map((s) => s.id) } } })).toBe(0);
}
