import type { ScriptedReply } from "../../models/scripted";
import { RUNTIME_NOTICES } from "../../runtime/config";
import { ack, errorCode, justGot, refusedSend, lastOf, say, short, taskIn, tasksIn, WAIT } from "./reply";
import { roleOf, type Role, type Seen } from "./seen";

// The teammates' scripts: the researcher's and the implementer's first round, a task the Lead
// assigned later, and any other teammate's.

/** The version a successful workspace change reported, if the last one of `tool` succeeded. */
const changed = (seen: Seen, tool: string) => (lastOf(seen, tool)?.output as { path: string; version: number } | undefined) ?? null;

/** Where each role puts its work: inside its task's write scope (SPEC.md §14). */
export const SCENARIO_FILES = { notes: "docs/research/notes.md", result: "src/result.md" } as const;

/** The newest active implementer on the roster (a retried spawn may have renamed it). */
function implementerName(seen: Seen): string {
  const agents = (lastOf(seen, "list_agents")?.output as { agents?: { name: string; status: string }[] } | undefined)?.agents ?? [];
  return agents.filter((a) => roleOf(a.name) === "implementer" && a.status !== "failed" && a.status !== "provisioning").at(-1)?.name ?? "implementer";
}

export function researcher(seen: Seen): ScriptedReply {
  const created = taskIn(lastOf(seen, "team_task_create"));
  const lastUpdate = taskIn(lastOf(seen, "team_task_update"));
  // A message that was sent stays sent (even when a restart came after it): never again.
  if (lastOf(seen, "send_message")) return say(`${ack(seen)}Research is done and the implementer has my findings.`);
  if (!created) {
    return say("Starting the research: first a task on the board.", {
      toolName: "team_task_create",
      input: {
        subject: `Research: ${short(seen.goal.replace(/^Research what is needed for: /, ""), 120)}`,
        description: `Collect what the implementation of "${seen.goal}" needs.`,
        write_scopes: ["docs/research"],
      },
    });
  }
  if (!lastUpdate || lastUpdate.id !== created.id) return claimStep(seen, created.id);
  const notes = changed(seen, "workspace_write");
  if (lastUpdate.status === "in_progress" && !notes) {
    return say(`${ack(seen)}Writing my findings to ${SCENARIO_FILES.notes}.`, {
      toolName: "workspace_write",
      input: { path: SCENARIO_FILES.notes, content: researchNotes(seen.goal) },
    });
  }
  if (lastUpdate.status === "in_progress") {
    return say(
      `${ack(seen)}Findings are in ${notes!.path} (version ${notes!.version}): a clear plan, the inputs it depends on, and a check that the result works. Marking ${created.id} complete.`,
      { toolName: "team_task_update", input: { task_id: created.id, expected_revision: lastUpdate.revision, action: "complete" } },
      { toolName: "list_agents", input: {} },
    );
  }
  // The implementer the roster showed could not be messaged (failed, or not there yet): wait
  // for the team to change, look again, then send.
  if (refusedSend(seen)) {
    return say(
      "The implementer is not reachable yet; waiting for the team to change.",
      WAIT,
      { toolName: "list_agents", input: {} },
    );
  }
  return say(`${created.id} is complete; telling the implementer.`, {
    toolName: "send_message",
    input: {
      target: implementerName(seen),
      message: `Research for ${created.id} is complete (notes in ${SCENARIO_FILES.notes}): plan first, list the inputs, verify the result. You can start.`,
    },
  });
}

export function implementer(seen: Seen): ScriptedReply {
  const mine = taskIn(lastOf(seen, "team_task_create"));
  const lastGood = taskIn(lastOf(seen, "team_task_update"));
  if (lastOf(seen, "send_message")) return say(`${ack(seen)}Implementation is done and the lead knows.`);

  if (!mine) {
    const research = tasksIn(lastOf(seen, "team_task_list")).find((t) => t.subject.startsWith("Research"));
    if (research) {
      return say(`The research task is ${research.id}; adding the implementation task behind it.`, {
        toolName: "team_task_create",
        input: {
          subject: `Implement: ${short(seen.goal.replace(/^Implement: /, ""), 120)}`,
          description: `Build the result for "${seen.goal}" using the research.`,
          blocked_by: [research.id],
          write_scopes: ["src"],
        },
      });
    }
    if (justGot(seen, "team_task_list")) {
      return say("No research task yet; waiting for the researcher.", WAIT);
    }
    return say("Looking for the research task on the board.", { toolName: "team_task_list", input: {} });
  }
  if (lastGood?.id === mine.id && lastGood.status === "in_progress" && !changed(seen, "workspace_write")) {
    return say(`${ack(seen)}Building it: a first draft of ${SCENARIO_FILES.result}.`, {
      toolName: "workspace_write",
      input: { path: SCENARIO_FILES.result, content: resultDraft(seen.goal) },
    });
  }
  if (lastGood?.id === mine.id && lastGood.status === "in_progress" && !changed(seen, "workspace_edit")) {
    return say(`${ack(seen)}Checked the draft against the research; marking it checked.`, {
      toolName: "workspace_edit",
      input: { path: SCENARIO_FILES.result, old_text: DRAFT_STATUS, new_text: CHECKED_STATUS },
    });
  }
  if (lastGood?.id === mine.id && lastGood.status === "in_progress") {
    const result = changed(seen, "workspace_edit")!;
    return say(`${ack(seen)}Built it following the research: ${result.path} is at version ${result.version}. Marking ${mine.id} complete.`, {
      toolName: "team_task_update",
      input: { task_id: mine.id, expected_revision: lastGood.revision, action: "complete" },
    });
  }
  if (lastGood?.id === mine.id && lastGood.status === "completed") {
    return say(`${ack(seen)}${mine.id} is complete; reporting to the lead.`, {
      toolName: "send_message",
      input: { target: "lead", message: `${mine.id} is complete: ${SCENARIO_FILES.result} follows the research and has been checked.` },
    });
  }
  return claimStep(seen, mine.id);
}

/**
 * The next step towards claiming `taskId`: a claim at the revision just read (its creation or a
 * get, after any restart); refused as blocked, a wait for a change; after that wait, or a claim
 * refused otherwise (a stale revision) or cut off by a restart, a fresh read first.
 */
function claimStep(seen: Seen, taskId: string): ScriptedReply {
  const refused = justGot(seen, "team_task_update");
  if (refused?.isError && errorCode(refused) === "TEAM_TASK_BLOCKED") return say(`${ack(seen)}${taskId} is blocked until what it waits for is complete; waiting.`, WAIT);
  const restarted = seen.inputs.some((t) => RUNTIME_NOTICES.has(t));
  const fresh = [justGot(seen, "team_task_get"), justGot(seen, "team_task_create")].map(taskIn).find((t) => t?.id === taskId);
  if (fresh && !restarted) {
    return say(`${ack(seen)}Claiming ${taskId}.`, { toolName: "team_task_update", input: { task_id: taskId, expected_revision: fresh.revision, action: "claim" } });
  }
  return say(`${ack(seen)}Reading ${taskId}.`, { toolName: "team_task_get", input: { task_id: taskId } });
}

/**
 * A task the Lead assigned after the first round: read it, claim it (waiting while it is
 * blocked), write the work into its own file, complete it, and tell who needs to know: the
 * researcher the implementer, the implementer the Lead.
 */
export function assignedTask(seen: Seen, role: Role, taskId: string): ScriptedReply {
  const file = role === "researcher" ? `docs/research/${taskId}.md` : `src/${taskId}.md`;
  if (lastOf(seen, "send_message")) return say(`${ack(seen)}${taskId} is done and reported.`);
  const mine = taskIn(lastOf(seen, "team_task_update"));
  if (mine?.status === "completed") {
    const target = role === "researcher" ? implementerName(seen) : "lead";
    if (refusedSend(seen)) return say(`${target} is not reachable yet; waiting.`, WAIT, { toolName: "list_agents", input: {} });
    return say(`${taskId} is complete; telling ${target}.`, {
      toolName: "send_message",
      input: { target, message: `${taskId} is complete (${file}).${role === "researcher" ? " You can start." : ""}` },
    });
  }
  if (mine?.status === "in_progress" && !changed(seen, "workspace_write")) {
    return say(`${ack(seen)}Working on ${taskId}: writing ${file}.`, {
      toolName: "workspace_write",
      input: { path: file, content: `# ${taskId}\n\n${role === "researcher" ? "Notes: plan, inputs, how to check it." : "Result, built following the research and checked."}\n` },
    });
  }
  if (mine?.status === "in_progress") {
    return say(`${ack(seen)}${file} is written; marking ${taskId} complete.`, {
      toolName: "team_task_update",
      input: { task_id: taskId, expected_revision: mine.revision, action: "complete" },
    });
  }
  return claimStep(seen, taskId);
}

const DRAFT_STATUS = "Status: draft";
const CHECKED_STATUS = "Status: checked against the research";

function researchNotes(goal: string): string {
  return [
    `# Research notes`,
    "",
    `For: ${short(goal.replace(/^Research what is needed for: /, ""), 200)}`,
    "",
    "- Start from a clear plan: what the result must do, and for whom.",
    "- List the inputs it depends on before building anything.",
    "- Decide how to check that the result works, and check it.",
    "",
  ].join("\n");
}

function resultDraft(goal: string): string {
  return [
    `# Result`,
    "",
    `${short(goal.replace(/^Implement: /, ""), 200)}`,
    "",
    DRAFT_STATUS,
    "",
    `Built following ${SCENARIO_FILES.notes}: plan, inputs, verification.`,
    "",
  ].join("\n");
}

export function genericTeammate(seen: Seen): ScriptedReply {
  if (seen.sentSinceInput) return say("Reported to the lead; done.");
  return say(`${ack(seen)}Working on: ${short(seen.goal, 120)}. Done; telling the lead.`, {
    toolName: "send_message",
    input: { target: "lead", message: `${seen.name} finished: ${short(seen.goal, 200)}` },
  });
}
