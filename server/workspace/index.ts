// The team workspace (docs/SPEC.md §14): versioned UTF-8 text files per team, in Postgres.
//
//   paths.ts       the relative-path rules (shared with the board's write scopes)
//   path-input.ts  those rules with the workspace's error code
//   schema.ts      authors, listings, reads, versions, change results (the one contract)
//   authors.ts     who changes a file: in-progress tasks and write-scope warnings
//   store.ts       write, edit, delete: one serialised transaction per change
//   reads.ts       list, read, history, changes in order, search, summary
//   fork.ts        an ordinary fork's copy as of its fork point
//   zip.ts         the whole workspace as a streamed zip

export * from "./schema";
export type { Writer } from "./authors";
export { normaliseFilePath, normalisePrefix } from "./path-input";
export { deleteFile, editFile, writeFile, type EditRequest, type WriteRequest } from "./store";
export { fileHistory, filesAsOfNow, filesChangedAfter, listFiles, listWorkspaceChanges, readFile, searchFiles, workspaceSummary } from "./reads";
export { copyWorkspaceAsOf } from "./fork";
export { workspaceZip } from "./zip";
