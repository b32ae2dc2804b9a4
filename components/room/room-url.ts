// The team room's address (docs/DECISIONS.md, UI): `/teams/<id>` with `?view=` (the agent
// view when absent), `member=` (the agent view's member, `lead` when absent), `members=a,b`
// (the split view's members), `seq=` (a moment of the member's transcript). The Files view's
// own part of it (`path`, `version`) is in files/links.ts. Pure, so links and the room read
// one format.

export interface RoomLocation {
  /** A view's id (room-views.tsx); unknown ids show the agent view. */
  view: string;
  member: string;
  members: string[];
  seq: number | null;
}

export const DEFAULT_VIEW = "agent";
/**
 * Transcripts side by side at most: each is a live feed, and a browser keeps at most six
 * connections to one server over HTTP/1.1, one of them the room's own feed (DECISIONS.md).
 */
export const SPLIT_MAX = 4;
export const LEAD = "lead";

export function readRoomLocation(params: { get(name: string): string | null }): RoomLocation {
  const seq = params.get("seq");
  return {
    view: params.get("view") || DEFAULT_VIEW,
    member: params.get("member") || LEAD,
    members: [...new Set((params.get("members") ?? "").split(",").filter(Boolean))].slice(0, SPLIT_MAX),
    seq: seq && /^\d{1,10}$/.test(seq) ? Number(seq) : null,
  };
}

/** The room at `loc`; defaults are left out, so the plain room stays `/teams/<id>`. */
export function roomHref(teamId: string, loc: Partial<RoomLocation>): string {
  const parts: string[] = [];
  if (loc.view && loc.view !== DEFAULT_VIEW) parts.push(`view=${encodeURIComponent(loc.view)}`);
  if (loc.member && loc.member !== LEAD) parts.push(`member=${encodeURIComponent(loc.member)}`);
  if (loc.members?.length) parts.push(`members=${loc.members.map(encodeURIComponent).join(",")}`);
  if (loc.seq !== undefined && loc.seq !== null) parts.push(`seq=${loc.seq}`);
  return `/teams/${teamId}${parts.length ? `?${parts.join("&")}` : ""}`;
}

/** A member's transcript at one event, in the agent view (the split choice is kept). */
export function transcriptHref(teamId: string, from: RoomLocation, member: string, seq: number): string {
  return roomHref(teamId, { ...from, view: DEFAULT_VIEW, member, seq });
}

/** The split choice with `name` added or taken out: the split view, or back to the agent view when empty. */
export function toggleSplitHref(teamId: string, from: RoomLocation, name: string): string {
  const members = from.members.includes(name) ? from.members.filter((n) => n !== name) : [...from.members, name];
  return roomHref(teamId, { ...from, view: members.length ? "split" : DEFAULT_VIEW, members, seq: null });
}
