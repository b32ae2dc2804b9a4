// The team timeline: every member's turns, tool calls, people's prompts, team messages, task
// changes and file changes, interleaved in one order (docs/DECISIONS.md, *Timeline order*).
//
// Each source keeps its own commit order: a session's events by seq, the mailbox by seq, the
// action record by id, the workspace by change number. Entries are ordered by (created_at, source, position); pages are a
// k-way merge of the sources from the newest down, so a page always takes a suffix of each
// source and the cursor is one position per source. The live reader moves forward from the
// sources' heads; rows whose ids were allocated before they committed (mailbox, action
// record) are looked for again over a short window, and a message's entry is sent again
// when its state changes (queued → delivered → consumed).
//
//   schema.ts          entries, filters and pages (the one contract the router returns)
//   cursor.ts          a cursor: one position per source, opaque base64url to the API
//   sources.ts         the sources' order keys, and which sources and kinds a filter reads
//   session-events.ts  members' turns, tool calls, prompts and task calls: the classification SQL
//   mail.ts            team messages
//   actions.ts         people's board changes
//   files.ts           workspace changes
//   page.ts            a page: the k-way merge from the newest down
//   follow.ts          the live reader

export * from "./schema";
export { encodeCursor, TimelineCursorString, type TimelineCursor } from "./cursor";
export { timelinePage } from "./page";
export { followTimeline, newFollower, TIMELINE_LOOKBACK_MS, type TimelineFollower, type TimelineRead } from "./follow";
