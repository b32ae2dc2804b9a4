import { describe, expect } from "vitest";
import { createDb } from "../db/client";
import { isAppError } from "../errors";
import type { SessionId } from "../ids";
import type { Person } from "../people/person";
import type { SessionEvent } from "../runtime/events";
import { promptSession } from "../runtime/sessions";
import { runtimeTest } from "../testing/fixtures";
import { createTestPerson } from "../testing/people";
import { eventsOf, newTestSession, waitFor, waitForTurns, type TestRuntime } from "../testing/runtime-harness";
import { listFiles } from "../workspace";
import { answerQuestion, decideApproval, pendingRequests, type WaitingView } from "./approvals";
import { listMembers } from "./roster";
import { setApprovalExpiry, setToolMode } from "./tool-policy";
import { expireRequests } from "../runtime/approvals";
import { stopAs } from "./person-actions";

// Tool calls that wait for people (SPEC.md §17), end to end through the real runtime and the
// keyless model (`/tool` lines): an `ask` call parks its turn with nothing held, is decided
// once, and the model reads the truth; `ask_humans` waits for an answer; `off` takes a tool
// out of the list; a stop while waiting closes the turn.

const it = runtimeTest({ team: true, delayMs: 1 });

type Rt = TestRuntime;

async function teamWithOwner(rt: Rt, title: string): Promise<{ lead: SessionId; owner: Person; by: { person: Person; teamId: SessionId } }> {
  const owner = await createTestPerson(rt.db, `Olive ${title}`);
  const lead = await newTestSession(rt.db, title, owner);
  return { lead, owner, by: { person: owner, teamId: lead } };
}

async function waitingIn(rt: Rt, lead: SessionId): Promise<WaitingView> {
  const [w] = await waitFor(async () => {
    const list = await pendingRequests(rt.db.sql, lead);
    return list.length > 0 ? list : null;
  }, 20_000, "a waiting request");
  return w!;
}

const results = (events: SessionEvent[], tool: string) =>
  events.flatMap((e) => (e.payload.kind === "tool_result" && e.payload.toolName === tool ? [e.payload] : []));

describe("tool calls that wait for people", () => {
  it("an `ask` call parks its turn with nothing held; approved, it runs once and the turn goes on", async ({ rt }) => {
    const { lead, by } = await teamWithOwner(rt, "Approve");
    await setToolMode(rt.db, by, rt.runtime.toolNamesFor(lead), "workspace_write", "ask");
    await promptSession(rt.db, lead, { text: '/tool workspace_write {"path":"notes/a.md","content":"hello","expected_version":0}' });
    const waiting = await waitingIn(rt, lead);
    expect(waiting).toMatchObject({ kind: "approval", member: "lead", toolName: "workspace_write", arguments: { path: "notes/a.md", content: "hello" } });

    // Parked: the turn is open, no process holds the agent, and the room says what it waits for.
    await waitFor(async () => (await rt.db.session.findUniqueOrThrow({ where: { id: lead } })).leaseOwner === null || null, 10_000, "the lease released");
    const row = await rt.db.session.findUniqueOrThrow({ where: { id: lead }, select: { activeTurnId: true, waitingFor: true } });
    expect(row.activeTurnId).not.toBeNull();
    expect(row.waitingFor).toBe("approval");
    expect((await listMembers(rt.db.sql, lead))[0]!.status).toBe("waiting_approval");
    expect((await listFiles(rt.db, lead)).files).toEqual([]);

    await decideApproval(rt.db, by, waiting.id, { approve: true, note: null, alwaysAllow: false });
    const events = await waitForTurns(rt.db, lead, 1, 20_000);
    expect(results(events, "workspace_write")).toEqual([expect.objectContaining({ isError: false, output: expect.objectContaining({ path: "notes/a.md", version: 1 }) })]);
    expect((await listFiles(rt.db, lead)).files.map((f) => [f.path, f.version])).toEqual([["notes/a.md", 1]]);
    expect(events.at(-1)!.payload).toMatchObject({ kind: "turn_end", reason: "completed" });
    expect(await pendingRequests(rt.db.sql, lead)).toEqual([]);

    // The first decision stands: a second one is refused and names it.
    const again = await decideApproval(rt.db, by, waiting.id, { approve: false, note: null, alwaysAllow: false }).catch((e: unknown) => e);
    expect(isAppError(again, "APPROVAL_NOT_PENDING") && again.message).toBe(`Already approved by ${by.person.name}`);
  });

  it("denied, the model reads who said no and why, and nothing ran", async ({ rt }) => {
    const { lead, by } = await teamWithOwner(rt, "Deny");
    await setToolMode(rt.db, by, rt.runtime.toolNamesFor(lead), "workspace_delete", "ask");
    await setToolMode(rt.db, by, rt.runtime.toolNamesFor(lead), "workspace_write", "ask");
    await promptSession(rt.db, lead, { text: '/tool workspace_write {"path":"keep.md","content":"x","expected_version":0}' });
    const waiting = await waitingIn(rt, lead);
    await decideApproval(rt.db, by, waiting.id, { approve: false, note: "not in this folder", alwaysAllow: false });
    const events = await waitForTurns(rt.db, lead, 1, 20_000);
    expect(results(events, "workspace_write")).toEqual([
      expect.objectContaining({ isError: true, errorCode: "TOOL_DENIED", output: { error: { code: "TOOL_DENIED", message: `Denied by ${by.person.name}: not in this folder` } } }),
    ]);
    expect((await listFiles(rt.db, lead)).files).toEqual([]);
  });

  it("ask_humans waits for an answer; the answer and who gave it are the result", async ({ rt }) => {
    const { lead, by } = await teamWithOwner(rt, "Question");
    await promptSession(rt.db, lead, { text: '/tool ask_humans {"question":"Which colour?","choices":["red","blue"]}' });
    const waiting = await waitingIn(rt, lead);
    expect(waiting).toMatchObject({ kind: "question", toolName: "ask_humans", arguments: { question: "Which colour?", choices: ["red", "blue"] } });
    expect((await listMembers(rt.db.sql, lead))[0]!.status).toBe("waiting_answer");
    // A question is answered, not approved.
    const wrong = await decideApproval(rt.db, by, waiting.id, { approve: true, note: null, alwaysAllow: false }).catch((e: unknown) => e);
    expect(isAppError(wrong, "INVALID_INPUT")).toBe(true);
    await answerQuestion(rt.db, by, waiting.id, "blue");
    const events = await waitForTurns(rt.db, lead, 1, 20_000);
    expect(results(events, "ask_humans")).toEqual([expect.objectContaining({ isError: false, output: { answer: "blue", by: by.person.name } })]);
  });

  it("an `off` tool is not in the list the model sees", async ({ rt }) => {
    const { lead, by } = await teamWithOwner(rt, "Off");
    await setToolMode(rt.db, by, rt.runtime.toolNamesFor(lead), "workspace_write", "off");
    await promptSession(rt.db, lead, { text: '/tool workspace_write {"path":"x.md","content":"x"}' });
    const events = await waitForTurns(rt.db, lead, 1, 20_000);
    expect(results(events, "workspace_write")).toEqual([expect.objectContaining({ isError: true, errorCode: "TOOL_NOT_FOUND" })]);
    const refused = await setToolMode(rt.db, by, rt.runtime.toolNamesFor(lead), "no_such_tool", "off").catch((e: unknown) => e);
    expect(isAppError(refused, "TOOL_NOT_FOUND")).toBe(true);
  });

  it("a stop while it waits cancels the request and closes the turn; the model reads that the call did not run", async ({ rt }) => {
    const { lead, by } = await teamWithOwner(rt, "Stop");
    await promptSession(rt.db, lead, { text: '/tool ask_humans {"question":"Go on?"}' });
    const waiting = await waitingIn(rt, lead);
    await stopAs(rt.db, lead, by);
    const events = await waitForTurns(rt.db, lead, 1, 20_000);
    expect(events.at(-1)!.payload).toMatchObject({ kind: "turn_end", reason: "aborted" });
    expect(results(events, "ask_humans")).toEqual([
      expect.objectContaining({ isError: true, errorCode: "INTERRUPTED", output: { error: { code: "INTERRUPTED", message: `Not run: the turn was stopped by ${by.person.name} before anyone decided.` } } }),
    ]);
    const late = await answerQuestion(rt.db, by, waiting.id, "yes").catch((e: unknown) => e);
    expect(isAppError(late, "APPROVAL_NOT_PENDING")).toBe(true);
    const row = await rt.db.session.findUniqueOrThrow({ where: { id: lead }, select: { activeTurnId: true, waitingFor: true } });
    expect(row).toEqual({ activeTurnId: null, waitingFor: null });
  });

  it("a request the team lets expire ends as a refusal the model reads; a late decision is refused", async ({ rt }) => {
    const { lead, by } = await teamWithOwner(rt, "Expiry");
    await setApprovalExpiry(rt.db, by, 5);
    await setToolMode(rt.db, by, rt.runtime.toolNamesFor(lead), "workspace_write", "ask");
    await promptSession(rt.db, lead, { text: '/tool workspace_write {"path":"late.md","content":"x","expected_version":0}' });
    const waiting = await waitingIn(rt, lead);
    // Not yet due: nothing expires.
    expect(await expireRequests(rt.db)).toBe(0);
    await rt.db.$executeRaw`UPDATE approvals SET created_at = now() - interval '6 minutes' WHERE id = ${waiting.id}`;
    // The runtime's own sweep may expire it first: either way it ends expired, once.
    expect(await expireRequests(rt.db)).toBeLessThanOrEqual(1);
    expect((await rt.db.approval.findUniqueOrThrow({ where: { id: waiting.id } })).status).toBe("expired");
    const events = await waitForTurns(rt.db, lead, 1, 20_000);
    expect(results(events, "workspace_write")).toEqual([
      expect.objectContaining({ isError: true, errorCode: "TOOL_DENIED", output: { error: { code: "TOOL_DENIED", message: "Not run: nobody decided in the time the team allows, so the request expired." } } }),
    ]);
    expect((await listFiles(rt.db, lead)).files).toEqual([]);
    const late = await decideApproval(rt.db, by, waiting.id, { approve: true, note: null, alwaysAllow: false }).catch((e: unknown) => e);
    expect(isAppError(late, "APPROVAL_NOT_PENDING") && late.message).toBe("Already expired");
  });

  it("two people deciding at once: exactly one decision is taken, the other is told it came second", async ({ rt, tdb }) => {
    const { lead, by } = await teamWithOwner(rt, "Race");
    await setToolMode(rt.db, by, rt.runtime.toolNamesFor(lead), "workspace_write", "ask");
    await promptSession(rt.db, lead, { text: '/tool workspace_write {"path":"race.md","content":"x","expected_version":0}' });
    const waiting = await waitingIn(rt, lead);
    const db2 = createDb(tdb, 2);
    try {
      const outcomes = await Promise.allSettled([
        decideApproval(rt.db, by, waiting.id, { approve: true, note: null, alwaysAllow: false }),
        decideApproval(db2, by, waiting.id, { approve: false, note: "no", alwaysAllow: false }),
      ]);
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
      const lost = outcomes.find((o) => o.status === "rejected");
      expect(lost?.status === "rejected" && isAppError(lost.reason, "APPROVAL_NOT_PENDING")).toBe(true);
    } finally {
      await db2.$disconnect();
    }
    const events = await waitForTurns(rt.db, lead, 1, 20_000);
    expect(results(events, "workspace_write")).toHaveLength(1);
    expect(await eventsOf(rt.db, lead)).toHaveLength(events.length);
  });
});
