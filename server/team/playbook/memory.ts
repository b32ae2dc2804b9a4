import type { ScriptedReply } from "../../models/scripted";
import { isInterrupted, say, short } from "./reply";
import { FROM_MEMORY, type Result, type Seen } from "./seen";

// The keyless Lead and the team's memory (SPEC.md §20): at the end of a round it proposes one
// memory of what the round did; a question about earlier work is looked up in the memory first
// (a new team finds there what another team learned, once the memory is shared).

type Call = { toolName: string; input: unknown };

/** A question about earlier work (`what did we decide before …?`). */
const EARLIER = /\b(?:earlier|before|previous(?:ly)?|last time|remember|decided|learn(?:ed|t)?)\b/i;
const QUESTION_WORDS = new Set(["what", "which", "when", "where", "does", "were", "team", "teams", "earlier", "before", "previous", "previously", "remember", "decide", "decided", "learned", "learnt", "about", "from", "with", "that", "this", "there"]);

/** The question's own words, any of which may match (web-search syntax: `a or b`). */
export function recallQuery(question: string): string {
  const words = (question.toLowerCase().match(/[\p{L}\p{N}]{4,}/gu) ?? []).filter((w) => !QUESTION_WORDS.has(w));
  return [...new Set(words)].slice(0, 8).join(" or ") || short(question, 200);
}

/** The round's last call of `tool` that ran (one cut off by a restart never did: it is made again). */
const ran = (seen: Seen, tool: string): Result | undefined =>
  seen.calls.filter((c) => c.toolName === tool && c.result && !isInterrupted(c.result)).at(-1)?.result;

/**
 * A question about earlier work: search the memory, then answer from what it found (and from
 * this team's earlier answer, when it has one). Null when that does not apply or nothing was
 * found: the Lead goes on as without memory.
 */
export function recall(seen: Seen, isQuestion: boolean, earlier: string | null): ScriptedReply | null {
  if (!seen.tools.has("memory_search") || !isQuestion || !EARLIER.test(seen.goal)) return null;
  const searched = ran(seen, "memory_search");
  if (!searched) return say("Looking in the team's memory first.", { toolName: "memory_search", input: { query: recallQuery(seen.goal) } });
  const hits = searched.isError ? [] : ((searched.output as { memories?: { id: string; text: string }[] }).memories ?? []);
  if (hits.length === 0) return null;
  return say(
    [
      `${FROM_MEMORY} (${hits.length === 1 ? "one memory matches" : `${hits.length} memories match`} "${short(seen.goal)}"):`,
      "",
      ...hits.map((h) => `- ${h.text} (${h.id})`),
      ...(earlier ? ["", "And from this team's earlier work:", "", earlier] : []),
    ].join("\n"),
  );
}

/** The memory the Lead proposes as a round's work is done, once a round (null: no memory tools, or proposed already). */
export function proposal(seen: Seen, what: string): Call | null {
  if (!seen.tools.has("memory_propose") || ran(seen, "memory_propose")) return null;
  return { toolName: "memory_propose", input: { text: what, tags: ["keyless"] } };
}

/** What the answer says of the round's proposal, as its result reported it. */
export function proposalNote(seen: Seen): string[] {
  const r = ran(seen, "memory_propose");
  if (!r) return [];
  if (r.isError) return ["", `The memory I proposed was refused: ${(r.output as { error?: { message?: string } }).error?.message ?? "no reason given"}.`];
  const { status } = r.output as { status?: string };
  return ["", status === "approved" ? "I saved a memory of this work; the team approves proposals as they come." : "I proposed a memory of this work for the team; agents use it once a person approves it."];
}
