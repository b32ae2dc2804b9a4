import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { Webhook } from "standardwebhooks";
import { z } from "zod";
import type { Db } from "../db/client";
import { Kickable } from "./kickable";
import { isPrivateAddress } from "./webhook-address";
import { privateWebhooksAllowed } from "../people/instance";

// Posts due webhook deliveries (SPEC.md §17), signed the Standard Webhooks way (webhook-id,
// webhook-timestamp, webhook-signature: HMAC-SHA256 over "id.timestamp.body"). An attempt claims
// its row for CLAIM_SECONDS first (so a crash mid-attempt retries it after that, and two
// processes never post it at once), then records the outcome: 2xx delivered; otherwise retried
// after RETRY_SECONDS[attempt], failed after the last. Delivery is at least once: a receiver drops
// repeats by webhook-id. Nothing here runs in a turn, so a slow or dead endpoint delays no agent.

/** The wait after each failed attempt (5 s … 6 h); after the last, the delivery is failed. */
export const RETRY_SECONDS = [5, 30, 120, 600, 1_800, 3_600, 10_800, 21_600];
const CLAIM_SECONDS = 60;
export const ATTEMPT_TIMEOUT_MS = 10_000;
const BATCH = 20;

const Claimed = z.array(z.object({ id: z.string(), payload: z.unknown(), attempts: z.number().int(), url: z.string(), secret: z.string() }));

type Outcome = { ok: true; status: number } | { ok: false; status: number | null; error: string };

/** One pass: claims up to a batch of due deliveries and attempts each; how many it claimed. */
export async function deliverDue(db: Db, opts: { timeoutMs?: number } = {}): Promise<number> {
  const claimed = Claimed.parse(
    await db.sql.$queryRaw`UPDATE webhook_deliveries d SET attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => ${CLAIM_SECONDS})
      FROM webhooks w
      WHERE w.id = d.webhook_id AND d.id IN (
        SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= now()
        ORDER BY next_attempt_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
      RETURNING d.id, d.payload, d.attempts, w.url, w.secret`,
  );
  if (claimed.length === 0) return 0;
  const allowPrivate = await privateWebhooksAllowed(db);
  await Promise.all(
    claimed.map(async (d) => {
      const outcome = await attempt(d, allowPrivate, opts.timeoutMs ?? ATTEMPT_TIMEOUT_MS);
      const retryIn = RETRY_SECONDS[d.attempts - 1];
      // Only while the claim is still this attempt's (a slower one than CLAIM_SECONDS lost it).
      if (outcome.ok) {
        await db.sql.$executeRaw`UPDATE webhook_deliveries SET status = 'delivered', delivered_at = now(), last_status_code = ${outcome.status}, last_error = NULL
          WHERE id = ${d.id} AND attempts = ${d.attempts} AND status = 'pending'`;
      } else {
        await db.sql.$executeRaw`UPDATE webhook_deliveries SET last_status_code = ${outcome.status}, last_error = ${outcome.error},
            status = CASE WHEN ${retryIn === undefined} THEN 'failed' ELSE 'pending' END,
            next_attempt_at = now() + make_interval(secs => ${retryIn ?? 0})
          WHERE id = ${d.id} AND attempts = ${d.attempts} AND status = 'pending'`;
      }
    }),
  );
  return claimed.length;
}

export function createWebhookSender(db: Db, log: (line: string) => void): Kickable {
  return new Kickable("webhooks: delivery failed", async () => (await deliverDue(db)) === BATCH, log);
}

/** One signed POST. */
async function attempt(d: z.infer<typeof Claimed>[number], allowPrivate: boolean, timeoutMs: number): Promise<Outcome> {
  const body = JSON.stringify(d.payload);
  const now = new Date();
  const headers = {
    "content-type": "application/json",
    "user-agent": "AgentTeams-Webhooks/1",
    "webhook-id": d.id,
    "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
    "webhook-signature": new Webhook(d.secret).sign(d.id, now, body),
  };
  let url: URL;
  try {
    url = new URL(d.url);
  } catch {
    return { ok: false, status: null, error: "not a URL" };
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  // A literal address is never looked up: checked here; a name, as it resolves (guardedLookup).
  if (!allowPrivate && isIP(host) && isPrivateAddress(host)) return { ok: false, status: null, error: `${host} is a private address` };
  return new Promise<Outcome>((resolve) => {
    const req = (url.protocol === "https:" ? https : http).request(url, { method: "POST", headers, lookup: allowPrivate ? undefined : guardedLookup }, (res) => {
      res.resume();
      const status = res.statusCode ?? 0;
      res.on("end", () => resolve(status >= 200 && status < 300 ? { ok: true, status } : { ok: false, status, error: `HTTP ${status}` }));
      res.on("error", (e) => resolve({ ok: false, status, error: e.message }));
    });
    // A whole-attempt deadline (the socket's own timeout only notices silence, not a trickle).
    const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    req.on("close", () => clearTimeout(deadline));
    req.on("error", (e) => resolve({ ok: false, status: null, error: e.message }));
    req.end(body);
  });
}

/** dns.lookup that refuses private addresses, so a name cannot be pointed inside after it was checked. */
function guardedLookup(
  hostname: string,
  options: object,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, "");
    const list = addresses;
    const bad = list.find((a) => isPrivateAddress(a.address));
    if (bad) return callback(Object.assign(new Error(`${hostname} resolves to a private address`), { code: "EPRIVATE" }), "");
    const wantsAll = (options as { all?: boolean }).all === true;
    if (wantsAll) return callback(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
}
