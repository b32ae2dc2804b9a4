import { describe, expect } from "vitest";
import { asSessionId } from "../ids";
import { runtimeTest } from "../testing/fixtures";
import { eventsOf, turnEnds, waitFor } from "../testing/runtime-harness";
import type { SessionEvent } from "../runtime/events";
import { createSession, promptSession } from "../runtime/sessions";
import { listMessages } from "./mailbox";
import { fileHistory, listFiles, readFile } from "../workspace";
import { SCENARIO_FILES, teamPlaybook } from "./playbook";
import { listMembers } from "./roster";
import { listTasks } from "./task-board";
import { listMemories } from "../memory/store";

// The keyless team scenario of SPEC.md §11, end to end on Postgres: one prompt to a
// keyless Lead, and the whole team plays out.

const it = runtimeTest({ team: true, playbook: teamPlaybook, delayMs: 2 });

function turnIdOfMessage(events: SessionEvent[], messageId: string): string | undefined {
  let turn: string | undefined;
  for (const { payload: p } of events) {
    if (p.kind === "turn_start") turn = p.turnId;
    if (p.kind === "user_message" && p.messageId === messageId) return turn;
  }
  return undefined;
}

describe("the keyless team scenario", () => {
  it("spawns two teammates who finish dependent tasks, message each other, and the Lead aggregates", async ({ rt }) => {
    const lead = await createSession(rt.db, { title: "Team run", model: { provider: "scripted", model: "keyless" } });
    const leadId = asSessionId(lead.id);
    await promptSession(rt.db, leadId, { text: "Build a tiny todo app" });

    const leadEvents = await waitFor(
      async () => {
        const ev = await eventsOf(rt.db, leadId);
        return turnEnds(ev).length >= 1 ? ev : null;
      },
      60_000,
      "the Lead's final answer",
    );
    expect(turnEnds(leadEvents)[0]?.reason, `the Lead's first turn_end: ${JSON.stringify(turnEnds(leadEvents)[0])}`).toBe("completed");
    const answer = leadEvents.filter((e) => e.payload.kind === "assistant_message").at(-1)!.payload;
    expect(answer.kind === "assistant_message" && answer.text).toContain("Final answer");

    // Three sessions, two active teammates.
    const members = await listMembers(rt.db, leadId);
    expect(members.map((m) => [m.name, m.phase])).toEqual([
      ["lead", "active"],
      ["researcher", "active"],
      ["implementer", "active"],
    ]);
    expect(await rt.db.session.count({ where: { teamId: leadId } })).toBe(3);

    // Both tasks completed at revision 3; task-2 waited for task-1.
    const { tasks } = await listTasks(rt.db, leadId, {});
    expect(tasks.map((t) => [t.id, t.status, t.revision])).toEqual([
      ["task-1", "completed", 3],
      ["task-2", "completed", 3],
    ]);
    expect(tasks[1]?.blockedBy).toEqual(["task-1"]);

    // Two team messages, both delivered and consumed.
    const mail = await listMessages(rt.db, leadId, {});
    expect(mail.map((m) => [m.senderName, m.targetName])).toEqual([
      ["researcher", "implementer"],
      ["implementer", "lead"],
    ]);
    await waitFor(async () => (await listMessages(rt.db, leadId, {})).every((m) => m.state === "consumed"), 10_000, "mail consumed");

    // The researcher's message was steered into the implementer's running turn: the
    // implementer did all its work in one turn, and the message entered that turn.
    const implementer = members.find((m) => m.name === "implementer")!;
    const implEvents = await eventsOf(rt.db, asSessionId(implementer.sessionId));
    const implTurns = implEvents.filter((e) => e.payload.kind === "turn_start");
    expect(implTurns).toHaveLength(1);
    const toImplementer = mail[0]!;
    const turnOfMail = turnIdOfMessage(implEvents, toImplementer.id);
    expect(turnOfMail).toBe(implTurns[0]!.payload.kind === "turn_start" ? implTurns[0]!.payload.turnId : "");
    const delivered = implEvents.find((e) => e.payload.kind === "user_message" && e.payload.messageId === toImplementer.id)!;
    expect(delivered.payload).toMatchObject({
      text: expect.stringMatching(new RegExp(`^Team message ${toImplementer.id} from researcher:`)),
      source: { kind: "team", senderName: "researcher", senderSessionId: members[1]!.sessionId },
    });

    // Real files: the researcher's notes and the implementer's result, each under its own
    // task's write scope (no warnings), the result edited once; the answer lists both.
    const { files } = await listFiles(rt.db, leadId);
    expect(files.map((f) => [f.path, f.version, f.author.name])).toEqual([
      [SCENARIO_FILES.notes, 1, "researcher"],
      [SCENARIO_FILES.result, 2, "implementer"],
    ]);
    const result = await fileHistory(rt.db, leadId, SCENARIO_FILES.result);
    expect(result.map((v) => [v.version, v.taskIds, v.warnings])).toEqual([
      [2, ["task-2"], []],
      [1, ["task-2"], []],
    ]);
    expect((await fileHistory(rt.db, leadId, SCENARIO_FILES.notes))[0]).toMatchObject({ taskIds: ["task-1"], warnings: [] });
    expect((await readFile(rt.db, leadId, { path: SCENARIO_FILES.result })).content).toContain("Status: checked against the research");
    expect((await readFile(rt.db, leadId, { path: SCENARIO_FILES.result, version: 1 })).content).toContain("Status: draft");
    const implEdits = implEvents.filter((e) => e.payload.kind === "tool_result" && e.payload.toolName === "workspace_edit");
    expect(implEdits.map((e) => e.payload.kind === "tool_result" && e.payload.output)).toEqual([{ path: SCENARIO_FILES.result, version: 2, bytes: expect.any(Number), replacements: 1 }]);
    expect(answer.kind === "assistant_message" && answer.text).toContain(`- ${SCENARIO_FILES.notes} (version 1, by researcher)`);
    expect(answer.kind === "assistant_message" && answer.text).toContain(`- ${SCENARIO_FILES.result} (version 2, by implementer)`);

    // One memory of the work waits for a person, its source the Lead's step that proposed it.
    const proposed = await listMemories(rt.db.sql, leadId, "proposed");
    const proposing = leadEvents.find((e) => e.payload.kind === "assistant_message" && e.payload.toolCalls.some((c) => c.toolName === "memory_propose"));
    expect(proposed).toEqual([expect.objectContaining({ text: expect.stringContaining('"Build a tiny todo app" was done in two steps'), proposedBy: { kind: "member", name: "lead", sessionId: leadId, seq: proposing?.seq } })]);
    expect(answer.kind === "assistant_message" && answer.text).toContain("I proposed a memory of this work for the team");
  });
});
