import type { TimelineEntry, TimelineKind } from "../api-types";
import { filesHref } from "../files/links";
import { transcriptHref, type RoomLocation } from "./room-url";

// What the room's timeline shows: entries merged from pages and the live feed, each as one
// sentence with a link to the moment it happened (or the file version it made). Pure, so the
// browser and tests agree.

/** The kinds, in the order the filter lists them (every kind the server sends has a label). */
export const KIND_LABELS: Record<TimelineKind, string> = {
  turn: "Turns",
  tool: "Tool calls",
  prompt: "Prompts",
  message: "Messages",
  task: "Tasks",
  file: "Files",
};
export const TIMELINE_KINDS = Object.keys(KIND_LABELS) as TimelineKind[];

const byOrder = (a: TimelineEntry, b: TimelineEntry) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0);

/**
 * Entries from a page or the live feed merged into what is shown: one per id (a later copy
 * replaces an earlier one: a message's new state), in timeline order.
 */
export function mergeEntries(current: readonly TimelineEntry[], incoming: readonly TimelineEntry[]): TimelineEntry[] {
  if (incoming.length === 0) return current as TimelineEntry[];
  const last = current.at(-1);
  const known = new Set(current.map((e) => e.id));
  // The common case: only new entries, all after the last one shown.
  if (incoming.every((e, i) => !known.has(e.id) && (!last || e.order > last.order) && (i === 0 || e.order > incoming[i - 1]!.order))) {
    return [...current, ...incoming];
  }
  const byId = new Map(current.map((e) => [e.id, e]));
  for (const e of incoming) byId.set(e.id, e);
  return [...byId.values()].sort(byOrder);
}

const TASK_VERBS: Record<NonNullable<Extract<TimelineEntry, { kind: "task" }>["action"]>, string> = {
  create: "created",
  claim: "claimed",
  release: "released",
  edit: "edited",
  set_dependencies: "set the dependencies of",
  complete: "completed",
  reopen: "reopened",
  reassign: "reassigned",
  delete: "deleted",
};

const TURN_ENDS = { aborted: "was stopped", interrupted: "was interrupted", error: "failed", budget: "stopped at the team budget" } as const;

/** Who did it: the member, or the person who acted outside any agent. */
export function actorOf(e: TimelineEntry): string {
  if ((e.kind === "task" || e.kind === "file") && e.by.kind === "person") return e.by.name;
  return e.member ?? "someone";
}

/** The entry as one sentence, starting with who acted. */
export function describeEntry(e: TimelineEntry): string {
  const who = actorOf(e);
  switch (e.kind) {
    case "turn": {
      if (e.phase === "start") return `${who} started a turn`;
      if (!e.reason || e.reason === "completed") return `${who} finished a turn`;
      return `${who}'s turn ${TURN_ENDS[e.reason]}${e.error ? `: ${e.error}` : ""}`;
    }
    case "tool":
      return `${who} called ${e.toolName}${e.ok ? "" : `: ${e.errorCode ?? "error"}`}`;
    case "prompt":
      return `${e.by?.name ?? "Someone"} prompted ${e.member ?? "an agent"}: ${e.text}`;
    case "message":
      return `${who} → ${e.to}: ${e.text}`;
    case "task": {
      const verb = e.action ? TASK_VERBS[e.action] : "changed";
      const to = e.action === "reassign" && e.ownerName ? ` to ${e.ownerName}` : "";
      return `${who} ${verb} ${e.taskId}${e.subject ? ` ${e.subject}` : ""}${to}`;
    }
    case "file":
      return `${who} ${e.deleted ? "deleted" : e.version === 1 ? "created" : "changed"} ${e.path} (version ${e.version})`;
  }
}

/**
 * Where the entry's link goes: the file version it made, or its member's transcript at that
 * moment; null when neither holds it (a person's board change).
 */
export function entryHref(teamId: string, from: RoomLocation, e: TimelineEntry): string | null {
  if (e.kind === "file") return filesHref(teamId, { path: e.path, version: e.version });
  return e.member !== null && e.seq !== null ? transcriptHref(teamId, from, e.member, e.seq) : null;
}

/** `list` with `item` added, or taken out when it was there. */
export function toggled<T>(list: readonly T[], item: T): T[] {
  return list.includes(item) ? list.filter((x) => x !== item) : [...list, item];
}

/** A stable hue per member (its place in the roster), so one member's entries read as one lane. */
export function memberHue(names: readonly string[], name: string | null): number | null {
  const i = name === null ? -1 : names.indexOf(name);
  return i < 0 ? null : (i * 137) % 360;
}
