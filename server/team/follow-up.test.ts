import { describe, expect } from "vitest";
import { inTx } from "../db/client";
import { BUDGET_RESUME_NOTICE } from "../runtime/config";
import { enqueue } from "../runtime/inbox";
import type { SessionEvent } from "../runtime/events";
import { promptSession } from "../runtime/sessions";
import { runtimeTest } from "../testing/fixtures";
import { eventsOf, newTestSession, turnEnds, waitFor } from "../testing/runtime-harness";
import type { SessionId } from "../ids";
import { listFiles } from "../workspace";
import { teamPlaybook } from "./playbook";
import { listTasks } from "./task-board";

// The keyless team after its first answer: a follow-up request is planned as new tasks
// (task-3, task-4), assigned to the teammates, done and answered anew; a question about the
// earlier result is answered from it directly; a runtime notice never becomes the goal.

const it = runtimeTest({ team: true, playbook: teamPlaybook, delayMs: 1 });

const answers = (events: SessionEvent[]) => events.flatMap((e) => (e.payload.kind === "assistant_message" && e.payload.text.startsWith("Final answer") ? [e.payload.text] : []));
const lastText = (events: SessionEvent[]) => events.flatMap((e) => (e.payload.kind === "assistant_message" ? [e.payload.text] : [])).at(-1) ?? "";

async function turnDone(db: Parameters<typeof eventsOf>[0], id: SessionId, n: number): Promise<SessionEvent[]> {
  return waitFor(
    async () => {
      const events = await eventsOf(db, id);
      const session = await db.session.findUniqueOrThrow({ where: { id }, select: { activeTurnId: true } });
      return turnEnds(events).length >= n && session.activeTurnId === null ? events : null;
    },
    60_000,
    `the Lead's turn ${n}`,
  );
}

describe("follow-up prompts to a finished keyless team", () => {
  it("plan new tasks and answer anew; a question is answered from the earlier work", async ({ rt }) => {
    const lead = await newTestSession(rt.db, "Follow-ups");
    await promptSession(rt.db, lead, { text: "Build a tiny todo app" });
    await turnDone(rt.db, lead, 1);

    await promptSession(rt.db, lead, { text: "Now add due dates to the todo items" });
    const second = await turnDone(rt.db, lead, 2);
    const { tasks } = await listTasks(rt.db, lead, {});
    expect(tasks.map((t) => [t.id, t.status, t.subject])).toEqual([
      ["task-1", "completed", expect.stringMatching(/^Research: /)],
      ["task-2", "completed", expect.stringMatching(/^Implement: /)],
      ["task-3", "completed", "Research: Now add due dates to the todo items"],
      ["task-4", "completed", "Implement: Now add due dates to the todo items"],
    ]);
    expect(tasks[3]!.blockedBy).toEqual(["task-3"]);
    // Each task's work is in a file of its own, by the teammate it was assigned to.
    const files = (await listFiles(rt.db, lead)).files.map((f) => [f.path, f.author.name]);
    expect(files).toEqual(expect.arrayContaining([["docs/research/task-3.md", "researcher"], ["src/task-4.md", "implementer"]]));
    const final = answers(second);
    expect(final).toHaveLength(2);
    expect(final[1]).toContain('Final answer for "Now add due dates to the todo items"');
    expect(final[1]).toContain("task-3");
    expect(final[1]).toContain("task-4");
    expect(final[1]).not.toContain("task-1 ");

    await promptSession(rt.db, lead, { text: "Which files did the team write?" });
    const third = await turnDone(rt.db, lead, 3);
    expect(lastText(third)).toContain("From the team's earlier work");
    expect(lastText(third)).toContain("src/task-4.md");
    expect((await listTasks(rt.db, lead, {})).tasks).toHaveLength(4);
  });

  it("never takes a runtime notice (a budget raised) as the team's goal", async ({ rt }) => {
    const lead = await newTestSession(rt.db, "Notices");
    await promptSession(rt.db, lead, { text: "Write a haiku about queues" });
    await turnDone(rt.db, lead, 1);
    // The notice a budget raise steers into a stopped member, arriving as its own input.
    await inTx(rt.db, (tx) => enqueue(tx, lead, { mode: "steer", text: BUDGET_RESUME_NOTICE, source: { kind: "system" } }));
    const events = await turnDone(rt.db, lead, 2);
    expect(lastText(events)).not.toContain(BUDGET_RESUME_NOTICE);
    expect((await listTasks(rt.db, lead, {})).tasks.map((t) => t.subject).join(" ")).not.toContain("budget");
    // Whatever the Lead answers, it answers about the person's prompt.
    expect(answers(events).at(-1)).toContain('Final answer for "Write a haiku about queues"');
  });
});
