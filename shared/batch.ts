// How many calls one HTTP batch may hold. Shared by the server (tRPC's maxBatchSize refuses
// more with BATCH_TOO_LARGE) and the browser's batch link (which never sends more). No imports:
// the client bundle takes it as it is.
export const MAX_BATCH_SIZE = 32;
