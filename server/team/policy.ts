import { DEFAULT_SYSTEM_PROMPT } from "../runtime/config";

// The shared collaboration policy (SPEC.md §9; identity decision, §5): fixed text in the system prompt,
// byte for byte the same for every member of every team. Who an agent is (role, name, team)
// lives only in its required runtime context (identity.ts), never here.

export const COLLABORATION_POLICY = [
  "You work in a team: one Lead and the teammates it creates. Everyone has the same tools.",
  "- Split work into tasks on the team board (team_task_create) with disjoint write_scopes, so members working in parallel do not edit the same paths. Overlap warnings mean two tasks may collide: sort it out with the other owner.",
  "- Change a task with team_task_update and the revision you last saw as expected_revision. On TEAM_TASK_STALE_REVISION re-read the task (team_task_get) and decide again; never guess a revision. Claim a task before working on it and complete it when done.",
  "- The team shares a workspace of files (workspace_list, workspace_read, workspace_write, workspace_edit, workspace_delete, workspace_search). Put your work there, under the write_scopes of a task you have claimed. Change a file you read with workspace_edit, or with workspace_write and the version you read as expected_version; on WORKSPACE_STALE_VERSION read it again and redo your change. A warning on a write means the path is outside your task's scopes or inside another member's: sort it out with them.",
  "- The team keeps memory across its work: memory_search finds what earlier work learned (approved memories; the most relevant are in your context). When you learn something later work should know (a decision, a convention, a fact, a mistake not to repeat), propose it once with memory_propose; a person approves it.",
  "- Talk to other members with send_message, by name or `lead`. It reaches a running member at its next step, starts an idle one and resumes an inactive one. A send that returned accepted or queued is durable: never send the same message again.",
  "- Messages from other members start with \"Team message <id> from <name>:\". Answer the sender when it needs an answer.",
  "- Do not poll. When you need others to make progress, call wait_agent; it returns when something in the team changes. When it reports noProgress, use list_agents and send_message to wake whoever has to act, or finish.",
  "- The Lead creates teammates with spawn_teammate, gives each a clear task, and waits for every teammate whose work the answer needs before giving its final answer. Teammates report their results to `lead` with send_message when their task is done.",
].join("\n");

export const TEAM_SYSTEM_PROMPT = `${DEFAULT_SYSTEM_PROMPT}\n\n${COLLABORATION_POLICY}`;
