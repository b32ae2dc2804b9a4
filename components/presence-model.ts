import type { MemberView, PresenceView } from "./api-types";

// Presence rows are per tab; the room shows people. Pure, so the bar and its tests agree.

export interface InRoom {
  userId: string;
  name: string;
  watching: string[];
  typingTo: string[];
}

/** Folds tabs into people, in the server's order (by name), agents named by member name. */
export function peopleInRoom(presence: readonly PresenceView[], members: readonly MemberView[]): InRoom[] {
  const nameOf = (sessionId: string | null) => (sessionId ? (members.find((m) => m.sessionId === sessionId)?.name ?? null) : null);
  const byUser = new Map<string, InRoom>();
  for (const tab of presence) {
    let p = byUser.get(tab.userId);
    if (!p) {
      p = { userId: tab.userId, name: tab.name, watching: [], typingTo: [] };
      byUser.set(tab.userId, p);
    }
    const watching = nameOf(tab.watching);
    const typing = nameOf(tab.typingTo);
    if (watching && !p.watching.includes(watching)) p.watching.push(watching);
    if (typing && !p.typingTo.includes(typing)) p.typingTo.push(typing);
  }
  return [...byUser.values()];
}
