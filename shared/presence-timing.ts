// Presence timing, as plain numbers with no imports: the browser's heartbeat imports them
// (components/people/use-presence.ts) without pulling any server module into the bundle.

/** A tab's row older than this is gone from the room. */
export const PRESENCE_TTL_MS = 30_000;
/** How often a tab refreshes its row: well inside the TTL. */
export const PRESENCE_HEARTBEAT_MS = 10_000;
