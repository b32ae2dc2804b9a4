import { describe, expect, it } from "vitest";
import type { SessionId } from "../ids";
import type { SessionEvent } from "../runtime/events";
import { promptSession } from "../runtime/sessions";
import { childProcessDatabase, spawnRuntime, type RuntimeChild } from "../testing/runtime-child";
import { eventsOf, newTestSession, waitFor } from "../testing/runtime-harness";
import { listTasks } from "./task-board";

// Keyless teams finish through repeated crashes: a runtime process is SIGKILLed again and again
// while several teams work (each prompted twice, the second prompt queued while the first is
// being planned), each time once the teams have logged a set number of further events, so the
// kills land in every kind of window. After the last restart every team finishes: both prompts
// answered, every task completed, nobody working, no input waiting.

const t = childProcessDatabase();

const TEAMS = 6;
/** Events logged (all sessions) between one start and its kill: varied, so windows differ. */
const KILL_AFTER = [7, 23, 11, 31, 5, 17, 41, 13, 29, 3, 19, 37];
const ENV = { RUNTIME_TEAM: "1", AGENT_LEASE_TTL_MS: "1000", RUNTIME_RECOVERY_INTERVAL_MS: "200", SCRIPTED_MODEL_DELAY_MS: "2" };

const eventCount = () => t.db.sessionEvent.count();
const finalAnswers = (events: SessionEvent[]) =>
  events.flatMap((e) => (e.payload.kind === "assistant_message" && !e.payload.interrupted && e.payload.text.startsWith("Final answer for") ? [e.payload.text.split("\n")[0]!] : []));

/** What each member did last, for a failure's message. */
async function lastSteps(): Promise<string> {
  const members = await t.db.teamMember.findMany({ orderBy: [{ teamId: "asc" }, { createdAt: "asc" }], select: { teamId: true, name: true, sessionId: true } });
  const out: string[] = [];
  for (const m of members) {
    const events = (await eventsOf(t.db, m.sessionId as SessionId)).filter((e) => e.payload.kind !== "assistant_delta" && e.payload.kind !== "step_start" && e.payload.kind !== "step_end");
    out.push(`${m.teamId} ${m.name}:`);
    for (const { payload: p } of events.slice(-8)) {
      const text = p.kind === "assistant_message" ? `${p.text.slice(0, 90)} ${p.toolCalls.map((c) => c.toolName).join(",")}` : p.kind === "user_message" ? p.text.slice(0, 90) : p.kind === "tool_result" ? JSON.stringify(p.output).slice(0, 90) : p.kind === "turn_end" ? p.reason : "";
      out.push(`  ${p.kind} ${text.replace(/\n/g, " ")}`);
    }
  }
  return out.join("\n");
}

describe("keyless teams under repeated kills", () => {
  it("all finish both prompts", { timeout: 420_000 }, async () => {
    const leads: SessionId[] = [];
    for (let i = 0; i < TEAMS; i++) leads.push(await newTestSession(t.db, `Crash loop ${i}`));
    const first = (i: number) => `Write a launch checklist for product ${i}`;
    const second = (i: number) => `Add a rollback plan for product ${i}`;

    let child: RuntimeChild = await spawnRuntime(t, ENV);
    for (const [i, lead] of leads.entries()) await promptSession(t.db, lead, { text: first(i) });
    // The second prompt arrives while the Lead plans the first (its first reply is streaming).
    for (const [i, lead] of leads.entries()) {
      await waitFor(async () => (await eventsOf(t.db, lead)).some((e) => e.payload.kind === "assistant_delta" || e.payload.kind === "assistant_message"), 60_000, "the Lead planning");
      await promptSession(t.db, lead, { text: second(i) });
    }
    for (const n of KILL_AFTER) {
      const from = await eventCount();
      await waitFor(async () => (await eventCount()) >= from + n, 120_000, `${n} more events`);
      await child.kill("SIGKILL");
      child = await spawnRuntime(t, ENV);
    }

    const unfinished = async () => {
      const open: string[] = [];
      for (const [i, lead] of leads.entries()) {
        const answers = finalAnswers(await eventsOf(t.db, lead));
        if (!answers.some((a) => a.includes(first(i)))) open.push(`${i}: first prompt unanswered`);
        if (!answers.some((a) => a.includes(second(i)))) open.push(`${i}: second prompt unanswered`);
        const { tasks } = await listTasks(t.db, lead, {});
        open.push(...tasks.filter((task) => task.status !== "completed").map((task) => `${i}: ${task.id} ${task.status}`));
      }
      const busy = await t.db.session.count({ where: { OR: [{ activeTurnId: { not: null } }, { inbox: { some: {} } }] } });
      if (busy > 0) open.push(`${busy} sessions busy`);
      return open;
    };
    await waitFor(async () => (await unfinished()).length === 0, 240_000, "every team finished").catch(async (e: unknown) => {
      throw new Error(`${String(e)}\n${(await unfinished()).join("\n")}\n${await lastSteps()}`);
    });

    for (const [i, lead] of leads.entries()) {
      // Each prompt was answered once, in order.
      expect(finalAnswers(await eventsOf(t.db, lead)), `team ${i}`).toEqual([`Final answer for "${first(i)}":`, `Final answer for "${second(i)}":`]);
      const { tasks } = await listTasks(t.db, lead, {});
      // Each request was planned once: a research task and an implementation behind it.
      expect(tasks.filter((task) => task.subject.startsWith("Research")).length, `team ${i}`).toBe(2);
      expect(tasks.filter((task) => task.subject.startsWith("Implement")).length, `team ${i}`).toBe(2);
    }
  });
});
