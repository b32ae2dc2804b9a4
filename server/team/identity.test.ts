import { describe, expect } from "vitest";
import { asSessionId, type SessionId } from "../ids";
import { defaultPlaybook } from "../models/scripted";
import type { ModelRequest } from "../models/types";
import { createSession, getSession, promptSession } from "../runtime/sessions";
import { runtimeTest } from "../testing/fixtures";
import { eventsOf, waitFor, waitForTurns } from "../testing/runtime-harness";
import { sendMessage } from "./mailbox";
import { membershipOf } from "../members/membership";
import { listMembers } from "./roster";
import { spawnTeammate } from "./provisioning";

// team:identity across cold resume and compaction (SPEC.md §5), seen in real model requests.

const requests: ModelRequest[] = [];

const it = runtimeTest({
  team: true,
  config: { idleEvictMs: 300, compactionBudgetTokens: 600 },
  playbook: (req) => {
    requests.push(req);
    return defaultPlaybook(req);
  },
});

const IDENTITY = "Your name in the team is `keeper`";
const sees = (req: ModelRequest | undefined, text: string) =>
  !!req?.messages.some((m) => m.role === "user" && m.text.includes(text));

describe("team identity", () => {
  it("survives cold resume and is re-admitted after compaction", async ({ rt }) => {
    const leadId = asSessionId((await createSession(rt.db, { title: "Identity", model: { provider: "scripted", model: "keyless" } })).id);
    const lead = await membershipOf(rt.db, leadId);
    await spawnTeammate(rt.db, lead, { name: "keeper", description: "Keeps things", prompt: "Start keeping", context: "fresh" });
    const keeper: SessionId = asSessionId((await listMembers(rt.db, leadId)).find((m) => m.name === "keeper")!.sessionId);
    await waitForTurns(rt.db, keeper, 1);
    expect(sees(requests.at(-1), IDENTITY)).toBe(true);

    // Evicted, then woken by mail: the cold-resumed teammate still knows who it is.
    await waitFor(async () => (await getSession(rt.db, keeper)).status === "inactive", 10_000, "eviction");
    await sendMessage(rt.db, { teamId: leadId, sender: { sessionId: leadId, name: "lead" }, target: { sessionId: keeper, name: "keeper" }, content: "still there?" });
    await waitForTurns(rt.db, keeper, 2);
    expect(sees(requests.at(-1), IDENTITY)).toBe(true);

    // Enough turns to pass the tiny budget: compaction drops the old snapshot, and the
    // identity comes back right after it.
    for (let i = 3; i <= 6; i++) {
      await promptSession(rt.db, keeper, { text: `filler prompt number ${i} with enough words to grow the history a bit more` });
      await waitForTurns(rt.db, keeper, i);
    }
    const events = await eventsOf(rt.db, keeper);
    const compaction = events.find((e) => e.payload.kind === "compaction");
    expect(compaction).toBeDefined();
    const readmitted = events.find(
      (e) =>
        e.seq > compaction!.seq &&
        e.payload.kind === "user_message" &&
        e.payload.source.kind === "runtime_context" &&
        e.payload.text.includes(IDENTITY),
    );
    expect(readmitted).toBeDefined();
    expect(sees(requests.filter((r) => r.purpose === "step").at(-1), IDENTITY)).toBe(true);
  });
});
