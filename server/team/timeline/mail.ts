import { z } from "zod";
import type { DbOrTx } from "../../db/client";
import { Prisma } from "../../db/generated/client";
import type { SessionId } from "../../ids";
import { LIMITS } from "../../../shared/limits";
import { assistantMessageIdOfCallKey } from "../../runtime/tools";
import { messageState } from "../mailbox";
import { MAIL, orderKey, type Plan, type Sourced } from "./sources";

// The mailbox's part of the timeline: team messages, each as a message entry.

const MailRow = z.object({
  id: z.string(),
  seq: z.number().int(),
  created_at: z.date(),
  sender_session_id: z.string(),
  sender_name: z.string(),
  target_name: z.string(),
  content: z.string(),
  state: z.string(),
  consumed_at: z.date().nullable(),
  tool_call_key: z.string().nullable(),
});
type MailRow = z.infer<typeof MailRow>;
const MailRows = z.array(MailRow);

export async function readMail(db: DbOrTx, teamId: SessionId, p: Plan, where: Prisma.Sql, order: Prisma.Sql, limit: number): Promise<MailRow[]> {
  if (!p.mail) return [];
  const of = p.mailOf ? Prisma.sql`AND (m.sender_session_id = ANY(${p.mailOf}::text[]) OR m.target_session_id = ANY(${p.mailOf}::text[]))` : Prisma.empty;
  const rows = await db.$queryRaw`
    SELECT m.id, m.seq, m.created_at, m.sender_session_id, m.sender_name, m.target_name,
      left(m.content, ${LIMITS.timelineExcerptChars}) AS content, m.state, m.consumed_at, m.tool_call_key
    FROM team_messages m WHERE m.team_id = ${teamId} AND ${where} ${of}
    ORDER BY ${order} LIMIT ${limit}`;
  return MailRows.parse(rows);
}

/** Message entries; each links to the sender's reply that called send_message. */
export async function mailEntries(db: DbOrTx, rows: readonly MailRow[]): Promise<Sourced[]> {
  const replyOf = new Map(rows.map((r) => [r.id, r.tool_call_key ? assistantMessageIdOfCallKey(r.tool_call_key) : null]));
  const replyIds = [...new Set([...replyOf.values()].filter((v): v is string => v !== null))];
  const replies = replyIds.length
    ? await db.sessionEvent.findMany({
        where: { sessionId: { in: [...new Set(rows.map((r) => r.sender_session_id))] }, messageId: { in: replyIds } },
        select: { sessionId: true, messageId: true, seq: true },
      })
    : [];
  const seqOf = new Map(replies.map((e) => [`${e.sessionId}/${e.messageId}`, e.seq]));
  return rows.map((r) => {
    const reply = replyOf.get(r.id);
    return {
      source: MAIL,
      pos: r.seq,
      entry: {
        id: `m:${r.id}`,
        order: orderKey(r.created_at, MAIL, r.seq),
        at: r.created_at,
        member: r.sender_name,
        seq: reply ? (seqOf.get(`${r.sender_session_id}/${reply}`) ?? null) : null,
        kind: "message",
        messageId: r.id,
        to: r.target_name,
        state: messageState({ state: r.state, consumedAt: r.consumed_at }),
        text: r.content,
      },
    };
  });
}
