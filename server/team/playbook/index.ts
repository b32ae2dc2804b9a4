import { defaultPlaybook, DIRECTIVE_REPLY, toolDirectives, type Playbook } from "../../models/scripted";
import { lead } from "./lead";
import { justGot, say } from "./reply";
import { isAnswer, read, roleOf } from "./seen";
import { assignedTask, genericTeammate, implementer, researcher } from "./teammates";

// The keyless team scenario (SPEC.md §11), played by the scripted model. Each member
// decides its next step from what any model would see: its runtime-context identity, the
// tool results it got and the messages it received. No hidden state.
//
//   lead:         spawn researcher + implementer → wait → check the board → … → list agents and
//                 files → answer (listing the files with their versions)
//   researcher:   create task-1 → claim → write its notes → complete (+ list agents) → message the
//                 implementer → done
//   implementer:  find the research task → create task-2 blocked by it → claim (blocked) → wait →
//                 claim once task-1 is completed → write the result → edit it → complete →
//                 message the lead → done
//
// Every later prompt to the Lead is a round of its own (its history from that prompt on): a
// question about the earlier result is answered from it directly; anything else is planned as
// new tasks (research, then an implementation behind it), assigned by message to the teammates
// the first round made, followed through and answered like the first. A teammate's round starts
// at the Lead's assignment. Runtime notices (a resume, a budget raised) never start a round.
//
// It copes with what the runtime does to a real model: a first step cut off by a restart (the
// history then holds the prompt and a resume notice) still forms the team; a spawn that failed
// is retried under another name (`implementer-2`, roles go by name prefix); a message whose
// send_message result is in the history is never sent again, one cut off (INTERRUPTED) is sent
// again; a prompt queued behind a cut-off round waits for that round's answer; after a restart
// members re-read the board before acting on it; a team gone idle with open work is nudged by
// its Lead (lead.ts), which answers truthfully when nudging does not help.
//
//   seen.ts       what a member has seen, read from its history (identity, round, calls, results)
//   reply.ts      what every script uses: a reply, the results it looks up, an acknowledgement
//   lead.ts       the Lead's script: form the team, follow through, answer; later rounds
//   teammates.ts  the researcher's, the implementer's and any other teammate's scripts

export { SCENARIO_FILES } from "./teammates";

const TOOLS_NEEDED = ["spawn_teammate", "send_message", "wait_agent", "team_task_create", "team_task_update", "team_task_list"];

export const teamPlaybook: Playbook = (request) => {
  if (request.purpose === "summary" || !TOOLS_NEEDED.every((t) => request.tools.some((s) => s.name === t))) {
    return defaultPlaybook(request);
  }
  const seen = read(request);
  // "/tool" directives are run verbatim, and their results reported, by the plain playbook.
  const lastReply = request.messages.findLast((m) => m.role === "assistant");
  if (toolDirectives(seen.inputs).length > 0 || (seen.last.length > 0 && lastReply?.role === "assistant" && lastReply.text === DIRECTIVE_REPLY)) {
    return defaultPlaybook(request);
  }
  if (seen.role === "lead") {
    const reply = lead(seen);
    if (!isAnswer(reply.text) || seen.waiting === 0) return reply;
    // A request queued behind this one is already in the history (its turn began while this
    // round was open, after a restart): the answer's reply takes it up, or nobody would.
    const next = lead(read({ ...request, messages: [...request.messages, { role: "assistant", text: reply.text, toolCalls: [] }] }));
    return { text: `${reply.text}\n\n${next.text}`, toolCalls: next.toolCalls ?? [] };
  }
  // Nobody else is working: a teammate's turn ends here; a message (the one it waits for, or
  // the Lead's nudge) wakes it, and it re-reads what it needs then.
  const wait = justGot(seen, "wait_agent");
  if (wait && !wait.isError && (wait.output as { noProgress?: boolean }).noProgress) return say("Nobody else is working now; I'll carry on when someone writes.");
  const role = roleOf(seen.name);
  if (role && seen.assigned) return assignedTask(seen, role, seen.assigned);
  if (role === "researcher") return researcher(seen);
  if (role === "implementer") return implementer(seen);
  return genericTeammate(seen);
};
