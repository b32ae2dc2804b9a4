import { describe, expect, it } from "vitest";
import { RESUME_NOTICE } from "../runtime/config";
import { promptSession } from "../runtime/sessions";
import { childProcessDatabase, spawnRuntime } from "../testing/runtime-child";
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
});
