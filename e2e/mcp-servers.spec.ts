import { expect, test } from "@playwright/test";
import { axeViolations } from "./axe";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { createTeam, panelTab, send, transcript } from "./helpers";

// A team's MCP server in the room: an owner adds one with a token (an MCP server run here with
// the official SDK, which wants it); the room shows its health and tools, and its tools join the
// policy table (not read-only, so "Ask first"). The keyless Lead calls one (a `/tool` line):
// the call waits for approval, runs once approved, and the result is in the transcript. The
// token never comes back to the page.

test("an owner adds an MCP server; its tools are the team's, and a call runs once approved", async ({ page }) => {
  test.setTimeout(90_000);
  const token = "e2e-mcp-token-123";
  const asked: string[] = [];
  const receiver = http.createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${token}`) return void res.writeHead(401).end();
    const mcp = new McpServer({ name: "e2e", version: "1.0.0" });
    mcp.registerTool("lookup", { description: "Looks a thing up", inputSchema: { q: z.string() } }, ({ q }) => {
      asked.push(q);
      return { content: [{ type: "text", text: `looked up ${q}` }] };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => void transport.close());
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/mcp`;
  try {
    await page.goto("/account");
    const allow = page.getByRole("checkbox", { name: "Webhooks and MCP servers may reach private addresses" });
    if (!(await allow.isChecked())) await allow.check();
    await expect(allow).toBeChecked();

    await createTeam(page, "MCP team");
    await panelTab(page, "Tools");
    const form = page.getByRole("form", { name: "Add an MCP server" });
    await form.getByLabel(/^Name/).fill("lookup");
    await form.getByLabel("Streamable HTTP URL").fill(url);
    await form.getByLabel(/^Bearer token/).fill(token);
    await form.getByRole("button", { name: "Add MCP server" }).click();
    // Added and connected at once.
    const server = page.getByRole("listitem", { name: "MCP server lookup" });
    await expect(server).toContainText("Connected · 1 tools", { timeout: 20_000 });
    await server.getByRole("button", { name: "Test connection" }).click();
    await expect(server).toContainText("Connected · 1 tools", { timeout: 20_000 });
    await server.getByText("Tools", { exact: true }).click();
    await expect(server).toContainText("Looks a thing up");
    expect(await page.content()).not.toContain(token);
    const violations = await axeViolations(page);
    expect(violations.map((v) => v.id)).toEqual([]);

    // The tool is in the team's policy, asking first (it is not marked read-only).
    await expect(page.getByRole("combobox", { name: "Mode of mcp__lookup__lookup" })).toHaveValue("ask");
    await send(page, '/tool mcp__lookup__lookup {"q":"penguins"}');
    const request = page.getByRole("region", { name: /Waiting for people/ }).getByRole("listitem", { name: "lead asks to run mcp__lookup__lookup" });
    await expect(request).toContainText('q: "penguins"', { timeout: 20_000 });
    expect(asked).toEqual([]);
    await request.getByRole("button", { name: "Approve" }).click();
    await expect(transcript(page).getByText(/Tool result: mcp__lookup__lookup/)).toHaveCount(1, { timeout: 20_000 });
    await expect(transcript(page).getByText("· looked up penguins")).toBeVisible();
    expect(asked).toEqual(["penguins"]);
    expect(await page.content()).not.toContain(token);
  } finally {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
});
