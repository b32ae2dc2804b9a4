import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { isAppError } from "../errors";
import { setPrivateWebhooksAllowed } from "../people/instance";
import { promptSession } from "../runtime/sessions";
import { runtimeTest } from "../testing/fixtures";
import { createTestPerson } from "../testing/people";
import { newTestSession, waitFor, waitForTurns, type TestRuntime } from "../testing/runtime-harness";
import { isPrivateAddress } from "./webhook-address";
import { deliverDue, RETRY_SECONDS } from "./webhook-sender";
import { addWebhook, listWebhooks, removeWebhook } from "./webhooks";

// Webhooks (SPEC.md §17) against a receiver on this machine: each team event a webhook wants is
// delivered once per attempt, signed as Standard Webhooks verifies; a failed attempt is retried
// with the same id until it lands or the retries run out; private addresses are refused unless
// the instance allows them; a receiver that never answers delays no turn.

const it = runtimeTest({ team: true, delayMs: 1 });

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A receiver whose next answers are scripted: a status, or "hang" (never answers). */
let received: Received[] = [];
let answers: (number | "hang")[] = [];
let server: http.Server;
let url = "";
beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      const answer = answers.shift() ?? 204;
      if (answer !== "hang") res.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function ownedTeam(rt: TestRuntime, title: string) {
  const owner = await createTestPerson(rt.db, `Olive ${title}`);
  const lead = await newTestSession(rt.db, title, owner);
  return { lead, by: { person: owner, teamId: lead } };
}

const deliveries = (rt: TestRuntime, webhookId: string) => rt.db.webhookDelivery.findMany({ where: { webhookId }, orderBy: { createdAt: "asc" } });

describe("webhooks", () => {
  it("private addresses are refused unless the instance allows them", async ({ rt }) => {
    for (const a of ["127.0.0.1", "10.1.2.3", "172.20.0.1", "192.168.1.1", "169.254.169.254", "::1", "fd00::1", "fe80::1", "::ffff:10.0.0.1", "0.0.0.0", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1", "224.0.0.1", "255.255.255.255", "ff02::1"]) expect(isPrivateAddress(a), a).toBe(true);
    for (const a of ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946", "192.0.2.1"]) expect(isPrivateAddress(a), a).toBe(false);
    const { by } = await ownedTeam(rt, "Private");
    await setPrivateWebhooksAllowed(rt.db, false);
    for (const bad of [url, "http://localhost:9/x"]) {
      const refused = await addWebhook(rt.db, by, { url: bad, events: ["team.finished"] }).catch((e: unknown) => e);
      expect(isAppError(refused, "PRIVATE_ADDRESS"), String(refused)).toBe(true);
    }
    for (const bad of ["ftp://example.com/x", "http://user:pw@example.com/x", "not a url"]) {
      expect(isAppError(await addWebhook(rt.db, by, { url: bad, events: ["team.finished"] }).catch((e: unknown) => e), "INVALID_INPUT")).toBe(true);
    }
    expect(await rt.db.webhook.count({ where: { teamId: by.teamId } })).toBe(0);
  });

  it("delivers a team's events signed, retries a failed attempt with the same id, and lists the log", async ({ rt }) => {
    await setPrivateWebhooksAllowed(rt.db, true);
    const { lead, by } = await ownedTeam(rt, "Hooked");
    const { webhook, secret } = await addWebhook(rt.db, by, { url, events: ["question.asked", "team.finished"] });
    expect(secret).toMatch(/^whsec_/);
    expect(JSON.stringify(await listWebhooks(rt.db, lead))).not.toContain(secret);

    received = [];
    answers = [500];
    await promptSession(rt.db, lead, { text: '/tool ask_humans {"question":"Ship it?"}' });
    // The first attempt fails: kept pending, with the status and a retry time.
    await waitFor(async () => (await deliveries(rt, webhook.id))[0]?.lastStatusCode === 500 || null, 20_000, "the first attempt");
    const [first] = await deliveries(rt, webhook.id);
    expect(first).toMatchObject({ status: "pending", attempts: 1, lastError: "HTTP 500" });
    expect(first!.nextAttemptAt.getTime()).toBeGreaterThan(Date.now() + (RETRY_SECONDS[0]! - 2) * 1000);

    // Due again: delivered, with the same webhook-id, verified by the Standard Webhooks library.
    // (The runtime's sweep sends due deliveries too: whichever pass claims it posts it, once.)
    await rt.db.webhookDelivery.update({ where: { id: first!.id }, data: { nextAttemptAt: new Date() } });
    await deliverDue(rt.db);
    await waitFor(async () => (await deliveries(rt, webhook.id))[0]!.status === "delivered" || null, 20_000, "the retry");
    expect((await deliveries(rt, webhook.id))[0]).toMatchObject({ status: "delivered", attempts: 2, lastStatusCode: 204 });
    expect(received.map((r) => r.headers["webhook-id"])).toEqual([first!.id, first!.id]);
    const payload = new Webhook(secret).verify(received[1]!.body, {
      "webhook-id": String(received[1]!.headers["webhook-id"]),
      "webhook-timestamp": String(received[1]!.headers["webhook-timestamp"]),
      "webhook-signature": String(received[1]!.headers["webhook-signature"]),
    });
    expect(payload).toMatchObject({ type: "question.asked", data: { teamId: lead, member: "lead", question: "Ship it?" } });
    expect(() => new Webhook(`whsec_${Buffer.from("another secret!!").toString("base64")}`).verify(received[1]!.body, received[1]!.headers as Record<string, string>)).toThrow();

    // Kinds it did not ask for are not sent; the ones it did, once each.
    const [request] = await rt.db.approval.findMany({ where: { sessionId: lead } });
    const { answerQuestion } = await import("./approvals");
    await answerQuestion(rt.db, by, request!.id, "yes");
    await waitForTurns(rt.db, lead, 1, 20_000);
    await waitFor(async () => ((await deliveries(rt, webhook.id)).length === 2 && (await deliveries(rt, webhook.id))[1]!.status === "delivered") || null, 20_000, "the answer's delivery");
    expect(JSON.parse(received.at(-1)!.body)).toMatchObject({ type: "team.finished" });
    expect((await listWebhooks(rt.db, lead))[0]!.deliveries.map((d) => [d.kind, d.status])).toEqual([
      ["team.finished", "delivered"],
      ["question.asked", "delivered"],
    ]);
    await removeWebhook(rt.db, by, webhook.id);
    expect(await rt.db.webhookDelivery.count({ where: { webhookId: webhook.id } })).toBe(0);
  });

  it("a receiver that never answers delays no turn, and a delivery fails after its last retry", async ({ rt }) => {
    await setPrivateWebhooksAllowed(rt.db, true);
    const { lead, by } = await ownedTeam(rt, "Slow");
    const { webhook } = await addWebhook(rt.db, by, { url, events: ["question.asked", "team.finished"] });
    received = [];
    answers = ["hang", "hang"];
    await promptSession(rt.db, lead, { text: '/tool ask_humans {"question":"Wait?"}' });
    await waitFor(async () => received.length >= 1 || null, 20_000, "the hanging request");
    // The receiver holds the request open; the team goes on regardless.
    const [request] = await rt.db.approval.findMany({ where: { sessionId: lead } });
    const { answerQuestion } = await import("./approvals");
    await answerQuestion(rt.db, by, request!.id, "no");
    const events = await waitForTurns(rt.db, lead, 1, 20_000);
    expect(events.at(-1)!.payload).toMatchObject({ kind: "turn_end", reason: "completed" });
    expect((await deliveries(rt, webhook.id))[0]).toMatchObject({ status: "pending", attempts: 1, deliveredAt: null });
    // The answer's delivery is attempted too, and hangs as well.
    await waitFor(async () => received.length >= 2 || null, 20_000, "the second hanging request");
    expect(await rt.db.webhookDelivery.count({ where: { webhookId: webhook.id } })).toBe(2);

    // On its last attempt a delivery that fails is failed for good. (The endpoint is moved to a
    // dead port before the deliveries are due again: the runtime's sweep may take them first.)
    answers = [];
    const failing = await rt.db.webhook.update({ where: { id: webhook.id }, data: { url: url.replace("/hooks", "/gone").replace(/:\d+/, ":9") } });
    expect(failing.url).toContain(":9/");
    server.closeAllConnections();
    await rt.db.webhookDelivery.updateMany({ where: { webhookId: webhook.id }, data: { attempts: RETRY_SECONDS.length, nextAttemptAt: new Date(), status: "pending" } });
    await deliverDue(rt.db, { timeoutMs: 2_000 });
    const ended = await waitFor(async () => {
      const rows = await deliveries(rt, webhook.id);
      return rows.every((d) => d.status !== "pending") ? rows : null;
    }, 20_000, "the last attempts");
    expect(ended.map((d) => [d.status, d.attempts])).toEqual([
      ["failed", RETRY_SECONDS.length + 1],
      ["failed", RETRY_SECONDS.length + 1],
    ]);
    expect(ended.every((d) => d.lastError?.includes("ECONNREFUSED"))).toBe(true);
  });
});
