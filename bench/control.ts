// People in control against a real Postgres: many turns parked for approval at once, the time
// from a decision to its tool call running, and webhook deliveries per second. Figures only.
//
//   npm run bench:control          (TEST_DATABASE_URL, default postgresql://postgres@127.0.0.1:5432/postgres)
//
// Creates its own database, drops it at the end, prints ONE JSON object on stdout; progress on
// stderr. Knobs: BENCH_PARKED (teams whose Lead's call waits for approval, default 1000),
// BENCH_DECIDE_CONCURRENCY (decisions in flight, default 20), BENCH_WEBHOOK_EVENTS (default 2000).
//
// - parked: each team's workspace_write is set to "ask" and its Lead prompted with one
//   `/tool workspace_write` line (keyless model, one runtime as the app runs it); the figure is
//   the time until every call waits, and what a waiting turn holds then: leases (none expected),
//   the process's memory.
// - decisionToTool: every request approved (BENCH_DECIDE_CONCURRENCY at a time); per call, the
//   tool's result event minus the decision's commit (database clock), and the wall time for all.
// - webhooks: one team with one webhook to a receiver in this process answering 204 at once;
//   BENCH_WEBHOOK_EVENTS team events recorded in one transaction, then the time until every
//   delivery is delivered (dispatch, then signed POSTs, as the app's workers run them).
// - budgetOvershoot: the keyless team scenario ("Build a tiny todo app") under a token budget,
//   how far its final spend passes the limit (percent): set before the prompt (BENCH_BUDGET
//   tokens, default 12000), and set to the spend + 400 while three members stream (their steps
//   held mid-reply by a stream gate until the limit is committed).
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { asSessionId, type SessionId } from "../server/ids";
import { setPrivateWebhooksAllowed } from "../server/people/instance";
import { promptSession } from "../server/runtime/sessions";
import { recordTeamEvent } from "../server/runtime/team-events";
import { decideApproval } from "../server/team/approvals";
import { setToolMode } from "../server/team/tool-policy";
import { addWebhook } from "../server/team/webhooks";
import { createTestPerson } from "../server/testing/people";
import { newTestSession, startTestRuntime } from "../server/testing/runtime-harness";
import { spendTokens } from "../shared/model-text";
import { ScriptedModel } from "../server/models/scripted";
import { setBudget, teamBudget } from "../server/team/budget";
import { createTeam } from "../server/team/person-actions";
import { teamPlaybook } from "../server/team/playbook";
import { StreamGate } from "../server/testing/stream-gate";
import { percentile, progress, round, runBench, serverInfo, waitUntil, withBenchDatabase } from "./support";

const PARKED = Number(process.env.BENCH_PARKED ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_DECIDE_CONCURRENCY ?? 20);
const WEBHOOK_EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 2000);

async function main() {
  await withBenchDatabase("bench_control", async (database) => {
    const server = await serverInfo(database.url);
    const rt = await startTestRuntime(database, { team: true, config: { idleEvictMs: 60_000 } });
    let result: Record<string, unknown> = {};
    try {
      const owner = await createTestPerson(rt.db, "Bench owner");
      progress(`${PARKED} teams, each with a call waiting for approval`);
      const leads: SessionId[] = [];
      for (let i = 0; i < PARKED; i++) {
        const lead = await newTestSession(rt.db, `Parked ${i}`, owner);
        await setToolMode(rt.db, { person: owner, teamId: lead }, rt.runtime.toolNamesFor(lead), "workspace_write", "ask");
        leads.push(lead);
      }
      const parkStart = performance.now();
      for (const [i, lead] of leads.entries()) {
        await promptSession(rt.db, lead, { text: `/tool workspace_write {"path":"notes/${i}.md","content":"x","expected_version":0}` });
      }
      await waitUntil(async () => (await rt.db.approval.count({ where: { status: "pending" } })) === PARKED, 600_000, "every call waiting");
      await waitUntil(async () => (await rt.db.session.count({ where: { leaseOwner: { not: null } } })) === 0, 60_000, "every lease released");
      const parkedMs = performance.now() - parkStart;
      const heldLeases = await rt.db.session.count({ where: { leaseOwner: { not: null } } });
      const rssMb = process.memoryUsage().rss / 2 ** 20;

      progress("approving every request");
      const requests = await rt.db.approval.findMany({ where: { status: "pending" }, select: { id: true, teamId: true, sessionId: true } });
      const decideStart = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < requests.length) {
            const r = requests[next++]!;
            await decideApproval(rt.db, { person: owner, teamId: asSessionId(r.teamId) }, r.id, { approve: true, note: null, alwaysAllow: false });
          }
        }),
      );
      await waitUntil(
        async () => (await rt.db.sessionEvent.count({ where: { kind: "tool_result", sessionId: { in: leads } } })) === PARKED,
        600_000,
        "every approved call run",
      );
      const decideAllMs = performance.now() - decideStart;
      const latencies = (
        await rt.db.$queryRaw<{ ms: number }[]>`SELECT extract(epoch FROM (e.created_at - a.decided_at)) * 1000 AS ms
          FROM approvals a JOIN session_events e ON e.session_id = a.session_id AND e.kind = 'tool_result'`
      )
        .map((r) => Number(r.ms))
        .sort((a, b) => a - b);

      progress(`${WEBHOOK_EVENTS} webhook deliveries`);
      let received = 0;
      const receiver = http.createServer((req, res) => {
        req.resume();
        req.on("end", () => {
          received += 1;
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
      await setPrivateWebhooksAllowed(rt.db, true);
      const hooked = leads[0]!;
      await addWebhook(rt.db, { person: owner, teamId: hooked }, { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`, events: ["mention"] });
      const hookStart = performance.now();
      await rt.db.sqlTx(async (tx) => {
        for (let i = 0; i < WEBHOOK_EVENTS; i++) await recordTeamEvent(tx, hooked, `bench:${i}`, { kind: "mention", userIds: [], by: "bench", where: "bench", text: String(i) });
      });
      await waitUntil(async () => (await rt.db.webhookDelivery.count({ where: { status: "delivered" } })) === WEBHOOK_EVENTS, 600_000, "every delivery delivered");
      const hookMs = performance.now() - hookStart;
      receiver.close();

      result = {
        bench: "control",
        at: new Date().toISOString(),
        machine: { cpus: os.cpus().length, loadAverage1m: round(os.loadavg()[0]!, 2), node: process.version, ...server },
        parked: { teams: PARKED, secondsUntilAllWaiting: round(parkedMs / 1000, 1), leasesHeldWhileWaiting: heldLeases, processRssMb: round(rssMb) },
        decisionToTool: {
          decisions: requests.length,
          concurrency: CONCURRENCY,
          secondsForAll: round(decideAllMs / 1000, 1),
          p50Ms: round(percentile(latencies, 50)),
          p95Ms: round(percentile(latencies, 95)),
          maxMs: round(latencies.at(-1) ?? 0),
        },
        webhooks: { deliveries: WEBHOOK_EVENTS, received, seconds: round(hookMs / 1000, 2), deliveriesPerSec: round(WEBHOOK_EVENTS / (hookMs / 1000)) },
      };
    } finally {
      await rt.stop();
    }
    // With a runtime of its own: the one above would drive its teams too.
    progress("budget overshoot");
    const budgetOvershoot = await measureBudgetOvershoot(database);
    process.stdout.write(`${JSON.stringify({ ...result, budgetOvershoot }, null, 2)}\n`);
  });
}

const BUDGET = Number(process.env.BENCH_BUDGET ?? 12_000);

/** The keyless team scenario's final spend against a budget set before the prompt, and one set while three members stream. */
async function measureBudgetOvershoot(database: Parameters<typeof startTestRuntime>[0]) {
  const gate = new StreamGate();
  const keyless = gate.wrap(new ScriptedModel({ delayMs: 15, playbook: teamPlaybook }));
  const rt = await startTestRuntime(database, { team: true, resolveModel: () => keyless });
  try {
    const owner = await createTestPerson(rt.db, "Budget owner");
    const by = (teamId: SessionId) => ({ person: owner, teamId });
    const team = async (title: string) => asSessionId((await createTeam(rt.db, { title, model: { provider: "scripted", model: "keyless" }, by: owner })).id);
    const members = (lead: SessionId) => rt.db.session.findMany({ where: { teamId: lead }, select: { activeTurnId: true } });
    const stopped = async (lead: SessionId) => {
      await waitUntil(async () => (await teamBudget(rt.db, lead)).stoppedAt !== null, 120_000, "the team to stop");
      await waitUntil(async () => (await members(lead)).every((m) => m.activeTurnId === null), 120_000, "every member stopped");
      return spendTokens((await teamBudget(rt.db, lead)).spent);
    };
    const overshoot = (spent: number, limit: number) => ({ limit, spent, overshootPercent: round((100 * Math.max(0, spent - limit)) / limit, 1) });

    const preset = await team("Budget set before the prompt");
    await setBudget(rt.db, by(preset), { tokens: BUDGET, costNanos: null });
    await promptSession(rt.db, preset, { text: "Build a tiny todo app" });
    const before = overshoot(await stopped(preset), BUDGET);

    const lowered = await team("Budget set while three members stream");
    await promptSession(rt.db, lowered, { text: "Build a tiny todo app" });
    await waitUntil(async () => (await members(lowered)).length === 3, 120_000, "both teammates");
    gate.arm();
    await waitUntil(async () => gate.held === 3, 120_000, "three members streaming");
    const limit = spendTokens((await teamBudget(rt.db, lowered)).spent) + 400;
    await setBudget(rt.db, by(lowered), { tokens: limit, costNanos: null });
    gate.open();
    const midWork = overshoot(await stopped(lowered), limit);
    return { setBeforePrompt: before, setWhileThreeStream: midWork };
  } finally {
    gate.open();
    await rt.stop();
  }
}

runBench(main);
