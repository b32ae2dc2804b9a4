import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "@playwright/test";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { createTeam, panelTab } from "./helpers";

// A team's MCP server in the room: an owner adds one with a token (an MCP server run here with
// the official SDK, which wants it), tests the connection, and the room shows its tools; the
// token never comes back to the page.

test("an owner adds an MCP server, tests it, and the room shows its health and tools", async ({ page }) => {
  test.setTimeout(90_000);
  const token = "e2e-mcp-token-123";
  const receiver = http.createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${token}`) return void res.writeHead(401).end();
    const mcp = new McpServer({ name: "e2e", version: "1.0.0" });
    mcp.registerTool("lookup", { description: "Looks a thing up", inputSchema: { q: z.string() } }, ({ q }) => ({ content: [{ type: "text", text: q }] }));
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
    const server = page.getByRole("listitem", { name: "MCP server lookup" });
    await expect(server).toContainText("Not tested yet");
    await server.getByRole("button", { name: "Test connection" }).click();
    await expect(server).toContainText("Connected · 1 tools", { timeout: 20_000 });
    await server.getByText("Tools", { exact: true }).click();
    await expect(server).toContainText("Looks a thing up");
    expect(await page.content()).not.toContain(token);
    const { violations } = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]).analyze();
    expect(violations.map((v) => v.id)).toEqual([]);
  } finally {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
});
