import { z } from "zod";
import type { DbOrTx } from "../db/client";
import type { SqlRunner } from "../db/sql";
import type { SessionId } from "../ids";
import { claimCtes, ClaimedRow, INBOX_ITEM_SELECT, InboxItemSchema, type ClaimedItem, type InboxItemView } from "../runtime/inbox";

// What tests read of an inbox, and the step-boundary claim on its own (the runtime claims inside
// its append: runtime/inbox.ts claimCtes).

export async function listInbox(db: DbOrTx, sessionId: SessionId): Promise<InboxItemView[]> {
  const rows = await db.inboxItem.findMany({ where: { sessionId }, orderBy: { position: "asc" }, select: INBOX_ITEM_SELECT });
  return rows.map((r) => InboxItemSchema.parse(r));
}

const ClaimedRows = z.array(ClaimedRow);

/** The claim on its own (claimCtes), giving the claimed items. */
export async function claimInbox(tx: SqlRunner, sessionId: SessionId, at: { firstStep: boolean }): Promise<ClaimedItem[]> {
  return ClaimedRows.parse(
    await tx.$queryRaw`WITH ${claimCtes(sessionId, at)} SELECT id, mode, text, source, position FROM claimed_items ORDER BY position`,
  );
}
