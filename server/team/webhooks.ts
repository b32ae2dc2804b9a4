import { randomBytes } from "node:crypto";
import { lookup } from "node:dns/promises";
import { z } from "zod";
import { inTx, type Db, type DbOrTx } from "../db/client";
import type { SqlRunner } from "../db/sql";
import { AppError } from "../errors";
import { newWebhookId, newWebhookMessageId, type SessionId } from "../ids";
import { LIMITS } from "../../shared/limits";
import { notifySql } from "../db/notify";
import { recordAction, type HumanActor } from "../people/actions";
import { privateWebhooksAllowed } from "../people/instance";
import { TeamEventKindSchema, type TeamEventData } from "../runtime/team-events";
import { lockTeam } from "../members/membership";
import { isPrivateAddress } from "./webhook-address";

// A team's webhooks (SPEC.md §17): owners add an endpoint (URL, the events it wants) and get its
// signing secret once. Each team event becomes one delivery per subscribed webhook, written in
// the transaction that fans the event out (team/dispatch.ts), so none is lost or doubled; the
// sender (webhook-sender.ts) posts it, signed, and retries it with backoff, outside any turn.

export const WEBHOOKS_KEY = "webhooks";

export const WebhookInputSchema = z.object({
  url: z.string().trim().min(1).max(LIMITS.webhookUrlChars),
  events: z.array(TeamEventKindSchema).min(1).max(TeamEventKindSchema.options.length),
});
export type WebhookInput = z.infer<typeof WebhookInputSchema>;

export const DeliveryViewSchema = z.object({
  id: z.string(),
  kind: TeamEventKindSchema,
  status: z.enum(["pending", "delivered", "failed"]),
  attempts: z.number().int(),
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
  createdAt: z.date(),
  nextAttemptAt: z.date(),
});

export const WebhookViewSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(TeamEventKindSchema),
  createdBy: z.object({ id: z.string(), name: z.string() }),
  createdAt: z.date(),
  /** The newest deliveries, newest first. */
  deliveries: z.array(DeliveryViewSchema),
});
export type WebhookView = z.infer<typeof WebhookViewSchema>;

const DELIVERY_LOG = 20;

/**
 * A URL the server may send to (a webhook, an MCP server): http(s), no credentials in it, and
 * (unless the instance allows private addresses) a host whose every address is public. The
 * webhook sender checks the address again as it connects (a name may resolve elsewhere later).
 */
export async function assertOutboundUrl(url: string, allowPrivate: boolean): Promise<URL> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AppError("INVALID_INPUT", "That is not a URL");
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") throw new AppError("INVALID_INPUT", "The URL must start with https:// or http://");
  if (parsed.username || parsed.password) throw new AppError("INVALID_INPUT", "The URL may not carry a user name or password (give a token or headers instead)");
  if (allowPrivate) return parsed;
  const host = parsed.hostname.replace(/^\[|\]$/g, "");
  const addresses = await lookup(host, { all: true }).catch(() => {
    throw new AppError("INVALID_INPUT", `The host ${host} does not resolve`);
  });
  if (addresses.some((a) => isPrivateAddress(a.address))) {
    throw new AppError("PRIVATE_ADDRESS", `${host} is a private address; the instance owner can allow private addresses on the Account page`);
  }
  return parsed;
}

/** A Standard Webhooks signing secret: whsec_ and 24 random bytes in base64. */
function newSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

/** An owner adds a webhook; the answer carries its secret, which is never shown again. */
export async function addWebhook(db: Db, by: HumanActor, input: WebhookInput): Promise<{ webhook: WebhookView; secret: string }> {
  const url = (await assertOutboundUrl(input.url, await privateWebhooksAllowed(db))).toString();
  const events = [...new Set(input.events)];
  const secret = newSecret();
  const id = newWebhookId();
  const createdBy = { id: by.person.id, name: by.person.name };
  const row = await inTx(db, async (tx) => {
    await lockTeam(tx, by.teamId);
    const count = await tx.webhook.count({ where: { teamId: by.teamId } });
    if (count >= LIMITS.webhooksPerTeam) throw new AppError("WEBHOOK_LIMIT", `A team has at most ${LIMITS.webhooksPerTeam} webhooks`);
    const made = await tx.webhook.create({ data: { id, teamId: by.teamId, url, events, secret, createdBy } });
    // The host only: the room's activity reaches viewers, and a webhook URL may be a credential.
    await recordAction(tx, by, "webhook_added", { detail: { host: new URL(url).host, events } });
    return made;
  });
  return { webhook: { id, url, events, createdBy, createdAt: row.createdAt, deliveries: [] }, secret };
}

export async function removeWebhook(db: Db, by: HumanActor, webhookId: string): Promise<void> {
  await inTx(db, async (tx) => {
    const gone = await tx.webhook.deleteMany({ where: { id: webhookId, teamId: by.teamId } });
    if (gone.count === 0) throw new AppError("WEBHOOK_NOT_FOUND", "No such webhook in this team", { webhookId });
    await recordAction(tx, by, "webhook_removed", { detail: { webhookId } });
  });
}

/** The team's webhooks with their newest deliveries (secrets never leave the server). */
export async function listWebhooks(db: DbOrTx, teamId: SessionId): Promise<WebhookView[]> {
  const hooks = await db.webhook.findMany({
    where: { teamId },
    orderBy: { createdAt: "asc" },
    select: {
      id: true,
      url: true,
      events: true,
      createdBy: true,
      createdAt: true,
      deliveries: { orderBy: { createdAt: "desc" }, take: DELIVERY_LOG },
    },
  });
  return hooks.map((h) =>
    WebhookViewSchema.parse({
      ...h,
      deliveries: h.deliveries.map((d) => ({ ...d, kind: (d.payload as { type?: unknown }).type })),
    }),
  );
}

/** What a receiver gets: the Standard Webhooks shape (type, timestamp, data). */
export function webhookPayload(kind: TeamEventData["kind"], teamId: string, data: TeamEventData, at: Date): unknown {
  const { kind: _kind, ...rest } = data;
  return { type: kind, timestamp: at.toISOString(), data: { teamId, ...rest } };
}

/**
 * In the dispatcher's transaction: one delivery of the event to each of the team's webhooks
 * that wants its kind (once per webhook and event), and the sender woken when it commits.
 */
export async function enqueueDeliveries(tx: SqlRunner, eventId: bigint, teamId: string, data: TeamEventData, at: Date): Promise<void> {
  const payload = JSON.stringify(webhookPayload(data.kind, teamId, data, at));
  await tx.$queryRaw`WITH added AS (
      INSERT INTO webhook_deliveries (id, webhook_id, event_id, payload)
      SELECT ${newWebhookMessageId()} || '_' || row_number() OVER (), w.id, ${eventId}, ${payload}::jsonb
      FROM webhooks w WHERE w.team_id = ${teamId} AND ${data.kind} = ANY(w.events)
      ON CONFLICT (webhook_id, event_id) DO NOTHING
      RETURNING 1
    )
    SELECT count(*)::int AS n FROM (SELECT ${notifySql(WEBHOOKS_KEY, "outbox")} WHERE EXISTS (SELECT 1 FROM added)) told`;
}
