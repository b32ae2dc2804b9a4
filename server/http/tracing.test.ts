import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { parseEnv } from "../env";
import { asUserId } from "../ids";
import { startAppServer, type AppServer } from "../main";
import { createApiToken } from "../people/api-tokens";
import { databaseTest } from "../testing/fixtures";
import { httpClient } from "../testing/http-client";
import { createTestPerson } from "../testing/people";
import { promptSession } from "../runtime/sessions";
import { decideApproval, pendingRequests } from "../team/approvals";
import { setToolMode } from "../team/tool-policy";
import { eventsOf, newTestSession, waitFor } from "../testing/runtime-harness";

// Traces over OTLP/HTTP to a receiver written here: a keyless team's prompt, sent over the API,
// gives a request span, and the Lead's turn its own trace in the GenAI agent conventions —
// invoke_agent, chat per model call, execute_tool per tool call — linked to that request's span,
// with no message text in any attribute (capture is off by default). A turn that waited for
// approval in one process and was taken up by another is traced whole by the one that ended it.

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: Record<string, unknown> }[];
  links?: { traceId: string; spanId: string }[];
}
const spans: OtlpSpan[] = [];
const bodies: string[] = [];
let receiver: http.Server;
let endpoint = "";
beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      bodies.push(body);
      if (req.url === "/v1/traces") {
        const data = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
        for (const rs of data.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(() => receiver.close());

const PROMPT = "Plan a small launch, traced";
const it = databaseTest();
const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v ? (v.stringValue ?? v.intValue ?? v.boolValue ?? v.arrayValue) : undefined;
};

describe("traces", () => {
  it("a prompt's request span, and its turn's trace in the GenAI agent conventions, linked to it", async ({ tdb, db }) => {
    const env = parseEnv({ PORT: "0", HOST: "127.0.0.1", SCRIPTED_MODEL_DELAY_MS: "1", OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
    const app = await startAppServer({ env, database: tdb, pages: false, log: () => undefined });
    try {
      const owner = await createTestPerson(db, "Tracy");
      const lead = await newTestSession(db, "Traced", owner);
      const { token } = await createApiToken(db, asUserId(owner.id), "trace");
      await httpClient(app.url, { token }).session.prompt.mutate({ sessionId: lead, text: PROMPT });
      await waitFor(async () => ((await eventsOf(db, lead)).some((e) => e.payload.kind === "turn_end") ? true : null), 60_000, "the Lead's turn");
    } finally {
      // Closing flushes what is buffered.
      await app.close();
    }
    const request = spans.find((s) => s.name === "POST trpc" && attr(s, "url.path") === "/api/trpc/session.prompt");
    expect(request).toBeDefined();
    const turn = spans.find((s) => s.name === "invoke_agent" && (s.links ?? []).some((l) => l.spanId === request!.spanId));
    expect(turn).toBeDefined();
    expect(turn!.parentSpanId ?? "").toBe("");
    expect(turn!.traceId).not.toBe(request!.traceId);
    expect(attr(turn!, "gen_ai.operation.name")).toBe("invoke_agent");
    const inTurn = spans.filter((s) => s.traceId === turn!.traceId && s.parentSpanId === turn!.spanId);
    const chats = inTurn.filter((s) => attr(s, "gen_ai.operation.name") === "chat");
    const tools = inTurn.filter((s) => attr(s, "gen_ai.operation.name") === "execute_tool");
    expect(chats.length).toBeGreaterThan(1);
    expect(chats[0]!.name).toMatch(/^chat /);
    expect(Number(attr(chats[0]!, "gen_ai.usage.output_tokens"))).toBeGreaterThan(0);
    expect(tools.map((s) => attr(s, "gen_ai.tool.name"))).toContain("spawn_teammate");
    expect(tools.find((s) => attr(s, "gen_ai.tool.name") === "spawn_teammate")!.name).toBe("execute_tool spawn_teammate");
    // Message contents are off by default.
    expect(bodies.join("")).not.toContain(PROMPT);
    expect(spans.some((s) => s.attributes.some((a) => a.key === "gen_ai.output.messages"))).toBe(false);
  });

  it("a turn that parked in one process and ended in another is traced whole by the one that ended it", async ({ tdb, db }) => {
    // The first process (tracing off) runs the turn until its call waits for approval, and stops.
    let first: AppServer | null = await startAppServer({ env: parseEnv({ PORT: "0", HOST: "127.0.0.1", SCRIPTED_MODEL_DELAY_MS: "1" }), database: tdb, pages: false, log: () => undefined });
    const owner = await createTestPerson(db, "Parker");
    const lead = await newTestSession(db, "Parked", owner);
    const by = { person: owner, teamId: lead };
    let turnId = "";
    try {
      await setToolMode(db, by, first.runtime.toolNamesFor(lead), "workspace_write", "ask");
      await promptSession(db, lead, { text: '/tool workspace_write {"path":"notes/p.md","content":"parked","expected_version":0}' });
      const [waiting] = await waitFor(async () => {
        const list = await pendingRequests(db.sql, lead);
        return list.length > 0 ? list : null;
      }, 20_000, "the call waiting for approval");
      await waitFor(async () => (await db.session.findUniqueOrThrow({ where: { id: lead } })).leaseOwner === null || null, 10_000, "the lease released");
      await first.close();
      first = null;
      // The second process (tracing on) takes the turn up once the call is approved, and ends it.
      const second = await startAppServer({ env: parseEnv({ PORT: "0", HOST: "127.0.0.1", SCRIPTED_MODEL_DELAY_MS: "1", OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }), database: tdb, pages: false, log: () => undefined });
      try {
        await decideApproval(db, by, waiting!.id, { approve: true, note: null, alwaysAllow: false });
        const events = await waitFor(async () => {
          const all = await eventsOf(db, lead);
          return all.some((e) => e.payload.kind === "turn_end") ? all : null;
        }, 20_000, "the turn's end");
        const start = events.find((e) => e.payload.kind === "turn_start")!.payload;
        turnId = start.kind === "turn_start" ? start.turnId : "";
      } finally {
        // Closing waits for the turn's read-back and flushes its spans.
        await second.close();
      }
    } finally {
      await first?.close();
    }
    const turn = spans.find((s) => s.name === "invoke_agent" && attr(s, "agent_teams.turn.id") === turnId);
    expect(turn).toBeDefined();
    const inTurn = spans.filter((s) => s.traceId === turn!.traceId && s.parentSpanId === turn!.spanId);
    // The model call before the wait (in the first process) and the one after it (in the second), and the approved call.
    expect(inTurn.filter((s) => attr(s, "gen_ai.operation.name") === "chat").length).toBeGreaterThanOrEqual(2);
    expect(inTurn.filter((s) => attr(s, "gen_ai.operation.name") === "execute_tool").map((s) => attr(s, "gen_ai.tool.name"))).toEqual(["workspace_write"]);
  });
});
