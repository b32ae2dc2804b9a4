import type { MemberView, PresenceView } from "../api-types";

// Presence rows are per tab; the room shows people, each with where they are (an agent, the
// timeline, the split view, a file, the board) and what they are doing (typing to an agent,
// editing a task or a file). Pure, so the list and its tests agree.

export interface InRoom {
  userId: string;
  name: string;
  /** "watching lead", "on the timeline", "in Files: src/a.md" … one per distinct place. */
  where: string[];
  /** "typing to lead", "editing task-3", "editing src/a.md" … */
  doing: string[];
}

/** One tab's place in words, or null when it names an agent not in the roster yet. */
function placeOf(tab: PresenceView, nameOf: (sessionId: string | null) => string | null): string | null {
  switch (tab.place) {
    case "agent": {
      const watching = nameOf(tab.watching);
      return watching ? `watching ${watching}` : null;
    }
    case "timeline":
      return "on the timeline";
    case "split":
      return "in the split view";
    case "files":
      return tab.file ? `in Files: ${tab.file}` : "in Files";
    case "board":
      return "on the board";
  }
}

function doingOf(tab: PresenceView, nameOf: (sessionId: string | null) => string | null): string[] {
  const typing = nameOf(tab.typingTo);
  const editing = tab.editing === null ? null : tab.editing.kind === "task" ? `editing ${tab.editing.taskId}` : `editing ${tab.editing.path}`;
  return [typing ? `typing to ${typing}` : null, editing].filter((x) => x !== null);
}

/** Folds tabs into people, in the server's order (by name), agents named by member name. */
export function peopleInRoom(presence: readonly PresenceView[], members: readonly MemberView[]): InRoom[] {
  const nameOf = (sessionId: string | null) => (sessionId ? (members.find((m) => m.sessionId === sessionId)?.name ?? null) : null);
  const byUser = new Map<string, InRoom>();
  for (const tab of presence) {
    let p = byUser.get(tab.userId);
    if (!p) {
      p = { userId: tab.userId, name: tab.name, where: [], doing: [] };
      byUser.set(tab.userId, p);
    }
    for (const [list, items] of [
      [p.where, [placeOf(tab, nameOf)]],
      [p.doing, doingOf(tab, nameOf)],
    ] as const) {
      for (const item of items) if (item && !list.includes(item)) list.push(item);
    }
  }
  return [...byUser.values()];
}
