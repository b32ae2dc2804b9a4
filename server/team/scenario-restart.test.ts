import { describe, expect, it } from "vitest";
import { RESUME_NOTICE } from "../runtime/config";
import { promptSession } from "../runtime/sessions";
import { childProcessDatabase, spawnRuntime, waitForLine } from "../testing/runtime-child";
import { eventsOf, newTestSession, waitFor } from "../testing/runtime-harness";
import { listMessages } from "./mailbox";
import { listMembers } from "./roster";
import { listTasks } from "./task-board";

// The keyless team scenario survives a server killed during the Lead's first step: the next
// process closes the cut turn, the Lead (whose history now holds the prompt and the resume
// notice) still forms its team, and the team finishes as it would have.

const t = childProcessDatabase();

describe("the keyless team scenario across a restart", () => {
  it("forms its team and finishes when the Lead's first step was cut off", { timeout: 180_000 }, async () => {
    const env = { RUNTIME_TEAM: "1", AGENT_LEASE_TTL_MS: "1000", RUNTIME_RECOVERY_INTERVAL_MS: "200" };
    const lead = await newTestSession(t.db, "Restarted team");
    const first = await spawnRuntime(t, { ...env, SCRIPTED_MODEL_DELAY_MS: "100" });
    await promptSession(t.db, lead, { text: "Build a tiny todo app" });
    await waitFor(async () => (await eventsOf(t.db, lead)).some((e) => e.payload.kind === "assistant_delta"), 60_000, "the Lead streaming");
    await first.kill("SIGKILL");
    expect(await t.db.teamMember.count({ where: { teamId: lead } })).toBe(0);

    await spawnRuntime(t, { ...env, SCRIPTED_MODEL_DELAY_MS: "0" });
    const events = await waitFor(
      async () => {
        const ev = await eventsOf(t.db, lead);
        const answered = ev.some((e) => e.payload.kind === "assistant_message" && e.payload.text.includes("Final answer"));
        return answered ? ev : null;
      },
      120_000,
      "the Lead's final answer",
    );
    expect(events.find((e) => e.payload.kind === "turn_end")?.payload).toMatchObject({ reason: "interrupted" });
    expect(events.some((e) => e.payload.kind === "user_message" && e.payload.text === RESUME_NOTICE)).toBe(true);

    const members = await listMembers(t.db, lead);
    expect(members.map((m) => [m.name, m.phase])).toEqual([
      ["lead", "active"],
      ["researcher", "active"],
      ["implementer", "active"],
    ]);
    const { tasks } = await listTasks(t.db, lead, {});
    expect(tasks.map((t) => [t.id, t.status])).toEqual([
      ["task-1", "completed"],
      ["task-2", "completed"],
    ]);
    const mail = await listMessages(t.db, lead, {});
    expect(mail.map((m) => [m.senderName, m.targetName])).toEqual([
      ["researcher", "implementer"],
      ["implementer", "lead"],
    ]);
  });

  it("answers both of two prompts back to back when the first round was cut off with the second queued", { timeout: 180_000 }, async () => {
    const env = { RUNTIME_TEAM: "1", AGENT_LEASE_TTL_MS: "1000", RUNTIME_RECOVERY_INTERVAL_MS: "200", SCRIPTED_MODEL_DELAY_MS: "0" };
    const lead = await newTestSession(t.db, "Back to back");
    // The researcher's task creation holds the first round open: the Lead cannot answer it yet.
    const first = await spawnRuntime(t, { ...env, RUNTIME_PAUSE_AFTER_EFFECT: "team_task_create" });
    await promptSession(t.db, lead, { text: "Build a tiny todo app" });
    await waitForLine(first, /^PAUSED team_task_create /);
    await promptSession(t.db, lead, { text: "Now add due dates to the todo items" });
    await first.kill("SIGKILL");

    await spawnRuntime(t, env);
    const answers = await waitFor(
      async () => {
        const texts = (await eventsOf(t.db, lead)).flatMap((e) => (e.payload.kind === "assistant_message" && e.payload.text.startsWith("Final answer for") ? [e.payload.text] : []));
        const idle = (await t.db.session.count({ where: { teamId: lead, OR: [{ activeTurnId: { not: null } }, { inbox: { some: {} } }] } })) === 0;
        return texts.length >= 2 && idle ? texts : null;
      },
      120_000,
      "both answers",
    );
    expect(answers.map((a) => a.split("\n")[0])).toEqual([
      'Final answer for "Build a tiny todo app":',
      'Final answer for "Now add due dates to the todo items":',
    ]);
    const { tasks } = await listTasks(t.db, lead, {});
    expect(tasks.map((task) => [task.id, task.status])).toEqual([
      ["task-1", "completed"],
      ["task-2", "completed"],
      ["task-3", "completed"],
      ["task-4", "completed"],
    ]);
  });
});
