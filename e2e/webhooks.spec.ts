import { expect, test } from "@playwright/test";
import { axeViolations } from "./axe";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { createTeam, panelTab, send } from "./helpers";

// Webhooks, end to end: the instance owner lets webhooks reach this machine (Account page), an
// owner adds one in the team's Tools tab and copies its secret, and a question an agent asks is
// posted to a receiver here, signed so the Standard Webhooks library verifies it; the delivery
// log says it was delivered.

test("an owner adds a webhook; the team's event arrives signed and the log says delivered", async ({ page }) => {
  test.setTimeout(120_000);
  const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  const receiver = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  try {
    await page.goto("/account");
    const allow = page.getByRole("checkbox", { name: "Webhooks and MCP servers may reach private addresses" });
    if (!(await allow.isChecked())) await allow.check();
    await expect(allow).toBeChecked();

    await createTeam(page, "Webhook team");
    await panelTab(page, "Tools");
    const form = page.getByRole("form", { name: "Add a webhook" });
    await form.getByLabel("Endpoint URL").fill(url);
    await form.getByRole("checkbox", { name: /Questions from agents/ }).check();
    await form.getByRole("button", { name: "Add webhook" }).click();
    const shown = form.getByRole("status").locator("code");
    await expect(shown).toHaveText(/^whsec_/);
    const secret = (await shown.textContent())!;
    const hook = page.getByRole("listitem", { name: `Webhook to ${url}` });
    await expect(hook).toContainText("No deliveries yet.");
    const violations = await axeViolations(page);
    expect(violations.map((v) => v.id)).toEqual([]);

    await send(page, '/tool ask_humans {"question":"Deploy now?"}');
    await expect.poll(() => received.length, { timeout: 20_000 }).toBe(1);
    const [r] = received;
    const payload = new Webhook(secret).verify(r!.body, {
      "webhook-id": String(r!.headers["webhook-id"]),
      "webhook-timestamp": String(r!.headers["webhook-timestamp"]),
      "webhook-signature": String(r!.headers["webhook-signature"]),
    });
    expect(payload).toMatchObject({ type: "question.asked", data: { member: "lead", question: "Deploy now?" } });
    await expect(hook.getByRole("row", { name: /question\.asked Delivered 1/ })).toBeVisible({ timeout: 20_000 });
  } finally {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
});
