import { formatCost } from "~/shared/model-text";
import type { MemberView, PersonAction, TeamPerson } from "../api-types";

// "Recent activity": the team's recorded human actions (server/people/actions.ts) as short
// sentences. Pure, so the room and its tests read them the same way.

const TASK_VERBS: Record<string, string> = {
  create: "created",
  claim: "claimed",
  release: "released",
  edit: "edited",
  set_dependencies: "changed the dependencies of",
  complete: "completed",
  reopen: "reopened",
  reassign: "reassigned",
  delete: "deleted",
};

const text = (v: unknown): string | null => (typeof v === "string" && v.length > 0 ? v : null);

/** Names for user ids: the team's people now, and anyone who acted before (they may have left). */
export function personNames(people: readonly TeamPerson[], actions: readonly PersonAction[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const a of actions) if (!names.has(a.userId)) names.set(a.userId, a.userName);
  for (const p of people) names.set(p.userId, p.name);
  return names;
}

const ROUTINE_CHANGES: Record<string, string> = { edited: "edited", paused: "paused", resumed: "resumed", run_now: "ran" };

/** One action as a sentence, e.g. "Bob removed a queued prompt for lead". */
export function describeAction(a: PersonAction, members: readonly MemberView[], names: ReadonlyMap<string, string>): string {
  const who = a.userName;
  const agent = a.sessionId ? (members.find((m) => m.sessionId === a.sessionId)?.name ?? "an agent") : null;
  const person = (id: unknown) => (text(id) ? (names.get(String(id)) ?? "someone") : "someone");
  const d = a.detail;
  switch (a.action) {
    case "prompt":
      return `${who} prompted ${agent ?? "an agent"}`;
    case "queue_edited":
      return `${who} edited a queued prompt${agent ? ` for ${agent}` : ""}`;
    case "queue_removed":
      return `${who} removed a queued prompt${agent ? ` for ${agent}` : ""}`;
    case "steer_now":
      return `${who} steered a queued prompt into ${agent ?? "an agent"}'s turn`;
    case "stop":
      return `${who} pressed Stop${agent ? ` on ${agent}` : ""}`;
    case "team_stopped": {
      const members = Array.isArray(d.members) ? d.members.map(String) : [];
      return `${who} stopped the team${members.length > 0 ? ` (${members.join(", ")})` : " (nobody was working)"}`;
    }
    case "task_changed": {
      const task = text(d.taskId) ?? "a task";
      const verb = TASK_VERBS[String(d.action)] ?? "changed";
      return `${who} ${verb} ${task}`;
    }
    case "file_changed":
      return `${who} ${d.deleted === true ? "deleted" : "wrote"} ${text(d.path) ?? "a file"}${typeof d.version === "number" ? ` (v${d.version})` : ""}`;
    case "teammate_added":
      return `${who} added teammate ${text(d.name) ?? ""}`.trimEnd();
    case "fork":
      // Recorded in the source team (with the fork's id) and in the fork itself.
      return text(d.forkId) ? `${who} forked ${agent ?? "an agent"} into a new team` : `${who} forked this team from another`;
    case "team_created":
      return `${who} created the team`;
    case "role_changed":
      return `${who} made ${person(d.userId)} ${d.to === "owner" ? "an owner" : `a ${String(d.to)}`}`;
    case "person_removed":
      return `${who} removed ${person(d.userId)} from the team`;
    case "left":
      return `${who} left the team`;
    case "joined":
      return `${who} joined as a ${text(d.role) ?? "member"}`;
    case "invite_created":
      return `${who} created an invite link${text(d.role) ? ` for a ${String(d.role)}` : ""}`;
    case "invite_revoked":
      return `${who} revoked an invite link`;
    case "budget_set": {
      const limits = [typeof d.tokens === "number" ? `${d.tokens.toLocaleString("en-US")} tokens` : null, typeof d.costNanos === "number" ? formatCost(d.costNanos) : null].filter(Boolean);
      return limits.length > 0 ? `${who} set the team budget to ${limits.join(" and ")}` : `${who} removed the team budget`;
    }
    case "tool_policy_set":
      if ("planApproval" in d) return d.planApproval === true ? `${who} made the Lead's plans wait for approval` : `${who} let the Lead's plans start at once`;
      if ("expiryMinutes" in d) return typeof d.expiryMinutes === "number" ? `${who} set waiting requests to expire after ${d.expiryMinutes} min` : `${who} let waiting requests wait until decided`;
      return `${who} set ${String(d.tool)} to ${d.mode === "ask" ? "ask first" : d.mode === "off" ? "off" : "allowed"}`;
    case "approval_decided":
      return `${who} ${d.approved === true ? "approved" : "denied"} ${String(d.tool)} for ${String(d.member)}`;
    case "question_answered":
      return `${who} answered ${String(d.member)}'s question`;
    case "webhook_added":
      return `${who} added a webhook to ${String(d.host)}`;
    case "webhook_removed":
      return `${who} removed a webhook`;
    case "mcp_server_added":
      return `${who} added the MCP server ${String(d.name)} (${String(d.host)})`;
    case "mcp_server_removed":
      return `${who} removed the MCP server ${String(d.name)}`;
    case "memory_decided":
      return `${who} ${d.approved === true ? (d.edited === true ? "edited and approved" : "approved") : "rejected"} a memory`;
    case "memory_edited":
      return `${who} edited a memory`;
    case "memory_deleted":
      return `${who} deleted a memory`;
    case "memory_settings_set": {
      // Each save changes the settings it names.
      const parts = [
        ...(typeof d.autoApprove === "boolean" ? [d.autoApprove ? "approve proposals as they come" : "wait for a person's approval"] : []),
        ...(typeof d.shared === "boolean" ? [d.shared ? "read the shared memory" : "not read the shared memory"] : []),
        ...(typeof d.contextTokens === "number" ? [`give agents up to ${d.contextTokens} tokens of memory in context`] : []),
      ];
      return `${who} set the team's memory to ${parts.join(", ") || "its defaults"}`;
    }
    case "routine_created":
      return `${who} created routine "${text(d.name) ?? "a routine"}"`;
    case "routine_changed":
      return `${who} ${ROUTINE_CHANGES[String(d.change)] ?? "changed"} a routine`;
    case "routine_deleted":
      return `${who} deleted routine "${text(d.name) ?? "a routine"}"`;
    case "plan_decided":
      return `${who} ${d.approved === true ? "approved" : "sent back for revision"} the Lead's plan`;
  }
}
