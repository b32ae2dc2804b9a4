import type { ScriptedReply } from "../../models/scripted";
import { RUNTIME_NOTICES } from "../../runtime/config";
import { parseTeamMessage } from "../../../shared/message-format";
import { ack, isInterrupted, justGot, lastOf, refusedSend, say, short, taskIn, tasksIn, WAIT } from "./reply";
import { proposal, proposalNote, recall } from "./memory";
import { FINAL_ANSWER, FROM_EARLIER, NO_RESULT_YET, roleOf, ROLES, type Result, type Role, type Seen } from "./seen";

// The Lead's script: form the team, follow the board through and answer; a later prompt is a
// round of new tasks assigned by message, or an answer from the earlier result.

const MAX_SPAWN_TRIES = 3;

const nameOf = (input: unknown) => (typeof input === "object" && input !== null && "name" in input ? String(input.name) : "");
const statusOf = (r: Result) => (r.output as { status?: string } | null)?.status;
/** How often the Lead wakes an idle team about open work before it answers that it could not finish. */
const MAX_NUDGES = 3;
const NUDGE = "Nudge:";

/**
 * Who the Lead still has to spawn: each role without a teammate that came up, under the first
 * name not yet refused (a spawn that never ran, cut off by a restart, may use its name again).
 */
function spawnsNeeded(seen: Seen): { role: Role; name: string }[] {
  const spawns = seen.calls.filter((c) => c.toolName === "spawn_teammate");
  const out: { role: Role; name: string }[] = [];
  for (const role of ROLES) {
    const mine = spawns.filter((c) => roleOf(nameOf(c.input)) === role);
    if (mine.some((c) => c.result && !c.result.isError && statusOf(c.result) !== "failed")) continue;
    const refused = new Set(mine.filter((c) => c.result && !isInterrupted(c.result)).map((c) => nameOf(c.input)));
    const name = [role, ...Array.from({ length: MAX_SPAWN_TRIES - 1 }, (_, i) => `${role}-${i + 2}`)].find((n) => !refused.has(n));
    if (name) out.push({ role, name });
  }
  return out;
}

type FileOut = { path: string; version: number; by: string };
const filesIn = (r: Result | undefined): FileOut[] => ((r?.output as { files?: FileOut[] } | undefined)?.files ?? []);

const SPAWN_BRIEF: Record<Role, { description: string; prompt: (goal: string) => string }> = {
  researcher: { description: "Finds what the implementation needs", prompt: (goal) => `Research what is needed for: ${goal}` },
  implementer: { description: "Builds the result once research is done", prompt: (goal) => `Implement: ${goal}` },
};

export function lead(seen: Seen): ScriptedReply {
  // Every request is answered: late mail or a notice is acknowledged, and nothing is redone.
  if (seen.answered) return say(`${ack(seen)}Every request so far is answered; nothing is open.`);
  // A later prompt to a team that exists: a round of follow-up work (or an answer).
  const team = teammatesOf(seen.before.calls);
  const formed = Boolean(team.researcher && team.implementer);
  // A question about earlier work is looked up in the team's memory first.
  const recalled = recall(seen, QUESTION.test(seen.goal.trim()), formed ? earlierAnswer(seen) : null);
  if (recalled) return recalled;
  if (team.researcher && team.implementer) return followUp(seen, { researcher: team.researcher, implementer: team.implementer });
  // The team is formed from the person's prompt, wherever it is in the history: a first step
  // cut off by a restart leaves the prompt behind the resume notice.
  const human = seen.request;
  // After a compaction the spawn calls are summarised away: the team exists already.
  const needed = human && !seen.compacted ? spawnsNeeded(seen) : [];
  if (human && needed.length > 0) {
    const retry = seen.calls.some((c) => c.toolName === "spawn_teammate" && roleOf(nameOf(c.input)) && c.result && !isInterrupted(c.result));
    const intro = retry
      ? `Spawning again: ${needed.map((n) => n.name).join(" and ")}.`
      : `I'll split "${short(human)}" between a researcher and an implementer, then wait for both.`;
    return say(
      intro,
      ...needed.map(({ role, name }) => ({
        toolName: "spawn_teammate",
        input: { name, description: SPAWN_BRIEF[role].description, context: "fresh", prompt: SPAWN_BRIEF[role].prompt(human) },
      })),
    );
  }
  if (justGot(seen, "spawn_teammate")) {
    return say("Both teammates are on it. Waiting for progress.", WAIT);
  }
  return followThrough(seen, null, { ...team, ...teammatesOf(seen.calls) });
}

/** Each role's teammate that came up in `calls` (the newest, when a spawn was retried). */
function teammatesOf(calls: Seen["calls"]): Partial<Record<Role, string>> {
  const out: Partial<Record<Role, string>> = {};
  for (const c of calls) {
    const role = roleOf(nameOf(c.input));
    if (c.toolName === "spawn_teammate" && role && c.result && !c.result.isError && statusOf(c.result) !== "failed") out[role] = nameOf(c.input);
  }
  return out;
}

const QUESTION = /\?\s*$|^(?:from [^:\n]*:\s*)?(?:what|why|how|which|who|where|when|can|could|does|do|did|is|are|was|were)\b/i;

/**
 * A later prompt: a question about the earlier result is answered from it; anything else
 * becomes new tasks on the board (task-3, task-4 …), assigned to the teammates by message,
 * followed through and answered.
 */
function followUp(seen: Seen, team: Record<Role, string>): ScriptedReply {
  const request = seen.goal;
  // Nothing but a memory search so far: the question is answered from the earlier result.
  if (QUESTION.test(request.trim()) && seen.calls.every((c) => c.toolName === "memory_search")) {
    const earlier = earlierAnswer(seen);
    return say(
      earlier
        ? `${FROM_EARLIER} (nothing new needed for this):\n\n${earlier}`
        : `${NO_RESULT_YET} to answer "${short(request)}" from yet. Send it as a request and I'll plan it.`,
    );
  }
  const created = seen.calls.flatMap((c) => (c.toolName === "team_task_create" && c.result && !c.result.isError ? [taskIn(c.result)!] : []));
  const research = created.find((t) => t.subject.startsWith("Research"));
  const build = created.find((t) => t.subject.startsWith("Implement"));
  const goal = short(request.replace(/^From [^:\n]*:\s*/, ""), 120);
  if (!research) {
    return say(`New request: "${goal}". Planning it on the board, research first.`, {
      toolName: "team_task_create",
      input: { subject: `Research: ${goal}`, description: `Collect what "${goal}" needs.`, write_scopes: ["docs/research"] },
    });
  }
  if (!build) {
    return say(`${research.id} is on the board; the implementation goes behind it.`, {
      toolName: "team_task_create",
      input: { subject: `Implement: ${goal}`, description: `Build "${goal}" using ${research.id}.`, blocked_by: [research.id], write_scopes: ["src"] },
    });
  }
  // Each assignment is sent until it was delivered: one cut off by a restart (INTERRUPTED: it
  // never ran) is sent again, one that was sent never is.
  const assignments = [
    { target: team.researcher, message: `Assignment: ${research.id} "${research.subject}". Write your notes under docs/research, then tell ${team.implementer}.` },
    { target: team.implementer, message: `Assignment: ${build.id} "${build.subject}". It waits for ${research.id}; put the result under src, then tell me.` },
  ].filter((a) => !seen.calls.some((c) => c.toolName === "send_message" && c.result && !c.result.isError && targetOf(c.input) === a.target));
  if (assignments.length > 0 && refusedSend(seen)) {
    return say("An assignment could not be delivered yet; waiting for the team to change.", WAIT);
  }
  if (assignments.length > 0) {
    return say(
      `Assigning ${assignments.map((a) => `${a.target === team.researcher ? research.id : build.id} to ${a.target}`).join(" and ")}.`,
      ...assignments.map((input) => ({ toolName: "send_message", input })),
    );
  }
  return followThrough(seen, [research.id, build.id], team);
}

/** The body of the Lead's earlier final answer (its first line is the request it answered). */
const earlierAnswer = (seen: Seen) => seen.before.answer?.split("\n").slice(1).join("\n").trim() || null;

const targetOf = (input: unknown) => (typeof input === "object" && input !== null && "target" in input ? String(input.target) : "");

/**
 * Waits for the round's tasks (`ids`; null: every task on the board) to be completed and the
 * implementer to report, then checks the roster and the files and answers. The board is read
 * again after every wake, interruption and restart; a team that went idle with work open is
 * nudged (each teammate whose work is open gets a message, which wakes it), and after
 * MAX_NUDGES the Lead answers truthfully that the team could not finish.
 */
function followThrough(seen: Seen, ids: string[] | null, team: Partial<Record<Role, string>>): ScriptedReply {
  const mine = (r: Result | undefined) => tasksIn(r).filter((t) => ids === null || ids.includes(t.id));
  const restarted = seen.inputs.some((t) => RUNTIME_NOTICES.has(t));
  const agents = justGot(seen, "list_agents");
  const files = justGot(seen, "workspace_list");
  if (!restarted && agents && !agents.isError && files && !files.isError) {
    const lines = mine(lastOf(seen, "team_task_list")).map((t) => `- ${t.id} "${t.subject}": ${t.status} (revision ${t.revision})`);
    const written = filesIn(files).map((f) => `- ${f.path} (version ${f.version}, by ${f.by})`);
    return say(
      [
        `${FINAL_ANSWER} "${short(seen.goal)}":`,
        "",
        ids === null ? "The researcher and the implementer both finished their tasks:" : "The researcher and the implementer finished the new tasks:",
        ...lines,
        "",
        ...(written.length > 0 ? ["Files in the team workspace:", ...written] : ["The team workspace is empty."]),
        ...proposalNote(seen),
      ].join("\n"),
    );
  }
  // A nudge (or any message) was sent: wait for the team to move.
  if (!restarted && justGot(seen, "send_message")) return say("Waiting for progress.", WAIT);
  const board = justGot(seen, "team_task_list");
  if (restarted || !board || board.isError) return say(`${ack(seen)}Checking the board.`, { toolName: "team_task_list", input: {} });
  const tasks = mine(board);
  const research = tasks.find((t) => t.subject.startsWith("Research"));
  const build = tasks.find((t) => t.subject.startsWith("Implement"));
  // Done when every task is completed and the implementer has reported back.
  const reported = seen.inputsSoFar.some((t) => roleOf(parseTeamMessage(t)?.senderName ?? "") === "implementer");
  if (research?.status === "completed" && build?.status === "completed" && tasks.every((t) => t.status === "completed") && reported) {
    // The round's work is proposed as a memory beside the last checks (once, whatever restarts).
    const remember = proposal(
      seen,
      `"${short(seen.goal.replace(/^From [^:\n]*:\s*/, ""), 200)}" was done in two steps: ${research.id} "${short(research.subject)}" by ${team.researcher ?? "the researcher"} (notes under docs/research), then ${build.id} by ${team.implementer ?? "the implementer"} (the result under src).`,
    );
    return say(
      "Both tasks are completed. Checking the roster and the files before I answer.",
      { toolName: "list_agents", input: {} },
      { toolName: "workspace_list", input: {} },
      ...(remember ? [remember] : []),
    );
  }
  // The wait before this read of the board (one cut off by a restart reported nothing).
  const wait = seen.results.findLast((r) => r.toolName === "wait_agent");
  const waited = wait && !wait.isError ? (wait.output as { noProgress?: boolean }) : undefined;
  const state = tasks.map((t) => `- ${t.id}: ${t.status}`).join("\n");
  if (waited?.noProgress) {
    const nudges = seen.calls.filter((c) => c.toolName === "send_message" && c.result && !c.result.isError && String((c.input as { message?: string }).message).startsWith(NUDGE));
    const open: { target: string | undefined; what: string }[] = [
      ...(research?.status === "completed" ? [] : [{ target: team.researcher, what: research ? `${research.id} "${research.subject}" is ${research.status}` : "the research task is not on the board" }]),
      ...(build?.status === "completed" && reported
        ? []
        : [{ target: team.implementer, what: build ? `${build.id} "${build.subject}" is ${build.status}${build.status === "completed" ? " but not reported" : ""}` : "the implementation task is not on the board" }]),
    ];
    const reachable = open.filter((o): o is { target: string; what: string } => o.target !== undefined);
    if (nudges.length >= MAX_NUDGES || reachable.length === 0) {
      return say(`${FINAL_ANSWER} "${short(seen.goal)}": the team could not finish. Nobody is working any more, and the board is not done:\n${state}`);
    }
    return say(
      `${ack(seen)}Nobody is working, but the board is not done:\n${state}\nWaking who has open work.`,
      ...reachable.map((o) => ({ toolName: "send_message", input: { target: o.target, message: `${NUDGE} nobody is working and ${o.what}. Re-read the board and carry it on.` } })),
    );
  }
  return say(`${ack(seen)}Not done yet (${tasks.filter((t) => t.status === "completed").length}/${Math.max(tasks.length, 2)} tasks completed); waiting.`, WAIT);
}
