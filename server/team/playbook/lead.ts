import { toolDirectives, type ScriptedReply } from "../../models/scripted";
import { parseTeamMessage } from "../mailbox";
import { ack, justGot, lastOf, say, short, taskIn, tasksIn } from "./reply";
import { FINAL_ANSWER, isPrompt, roleOf, ROLES, type Result, type Role, type Seen } from "./seen";

// The Lead's script: form the team, follow the board through and answer; a later prompt is a
// round of new tasks assigned by message, or an answer from the earlier result.

const MAX_SPAWN_TRIES = 3;

const nameOf = (input: unknown) => (typeof input === "object" && input !== null && "name" in input ? String(input.name) : "");
const statusOf = (r: Result) => (r.output as { status?: string } | null)?.status;
const isInterrupted = (r: Result) => r.isError && (r.output as { error?: { code?: string } } | null)?.error?.code === "INTERRUPTED";

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
  // A later prompt to a team that exists: a round of follow-up work (or an answer).
  const team = teammatesOf(seen.before.calls);
  if (team.researcher && team.implementer) return followUp(seen, { researcher: team.researcher, implementer: team.implementer });
  // The team is formed from the person's prompt, wherever it is in the history: a first step
  // cut off by a restart leaves the prompt behind the resume notice.
  // A prompt of "/tool" lines is a person driving tools by hand, not a goal for a team.
  const human = seen.inputsSoFar.filter((t) => isPrompt(t) && toolDirectives([t]).length === 0).at(-1);
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
    return say("Both teammates are on it. Waiting for progress.", { toolName: "wait_agent", input: { timeout_ms: 60_000 } });
  }
  return followThrough(seen, null);
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
  if (QUESTION.test(request.trim()) && seen.calls.length === 0) {
    const earlier = seen.before.answer?.split("\n").slice(1).join("\n").trim();
    return say(
      earlier
        ? `From the team's earlier work (nothing new needed for this):\n\n${earlier}`
        : `The team has no finished result to answer "${short(request)}" from yet. Send it as a request and I'll plan it.`,
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
  if (!seen.calls.some((c) => c.toolName === "send_message")) {
    return say(
      `Assigning ${research.id} to ${team.researcher} and ${build.id} to ${team.implementer}.`,
      { toolName: "send_message", input: { target: team.researcher, message: `Assignment: ${research.id} "${research.subject}". Write your notes under docs/research, then tell ${team.implementer}.` } },
      { toolName: "send_message", input: { target: team.implementer, message: `Assignment: ${build.id} "${build.subject}". It waits for ${research.id}; put the result under src, then tell me.` } },
    );
  }
  if (justGot(seen, "send_message")) return say("Both are assigned. Waiting for progress.", { toolName: "wait_agent", input: { timeout_ms: 60_000 } });
  return followThrough(seen, [research.id, build.id]);
}

/**
 * Waits for the round's tasks (`ids`; null: every task on the board) to be completed and the
 * implementer to report, then checks the roster and the files and answers.
 */
function followThrough(seen: Seen, ids: string[] | null): ScriptedReply {
  const mine = (r: Result | undefined) => tasksIn(r).filter((t) => ids === null || ids.includes(t.id));
  if (justGot(seen, "list_agents")) {
    const lines = mine(lastOf(seen, "team_task_list")).map((t) => `- ${t.id} "${t.subject}": ${t.status} (revision ${t.revision})`);
    const files = filesIn(lastOf(seen, "workspace_list")).map((f) => `- ${f.path} (version ${f.version}, by ${f.by})`);
    return say(
      [
        `${FINAL_ANSWER} "${short(seen.goal)}":`,
        "",
        ids === null ? "The researcher and the implementer both finished their tasks:" : "The researcher and the implementer finished the new tasks:",
        ...lines,
        "",
        ...(files.length > 0 ? ["Files in the team workspace:", ...files] : ["The team workspace is empty."]),
      ].join("\n"),
    );
  }
  const board = justGot(seen, "team_task_list");
  if (board) {
    const tasks = mine(board);
    // Done when every task is completed and the implementer has reported back.
    const reported = seen.inputsSoFar.some((t) => roleOf(parseTeamMessage(t)?.senderName ?? "") === "implementer");
    if (tasks.length >= 2 && tasks.every((t) => t.status === "completed") && reported) {
      return say(
        "Both tasks are completed. Checking the roster and the files before I answer.",
        { toolName: "list_agents", input: {} },
        { toolName: "workspace_list", input: {} },
      );
    }
    const lastWait = lastOf(seen, "wait_agent")?.output as { noProgress?: boolean } | undefined;
    if (lastWait?.noProgress) {
      return say(`Nobody is working any more, but the board is not finished:\n${tasks.map((t) => `- ${t.id}: ${t.status}`).join("\n")}`);
    }
    return say(`${ack(seen)}Not done yet (${tasks.filter((t) => t.status === "completed").length}/${Math.max(tasks.length, 2)} tasks completed); waiting.`, {
      toolName: "wait_agent",
      input: { timeout_ms: 60_000 },
    });
  }
  // Woken by a wait, a message or a new prompt: look at the board.
  return say(`${ack(seen)}Checking the board.`, { toolName: "team_task_list", input: {} });
}
