import { describe, expect } from "vitest";
import { asSessionId } from "../ids";
import { ScriptedModel } from "../models/scripted";
import type { ModelRequest } from "../models/types";
import { recordingModel } from "../testing/recording-model";
import { createSession, promptSession } from "../runtime/sessions";
import { runtimeTest } from "../testing/fixtures";
import { turnEnds, waitFor, eventsOf } from "../testing/runtime-harness";
import { teamPlaybook } from "./playbook";
import { COLLABORATION_POLICY } from "./policy";

// SPEC.md §5 (identity decision): the fixed collaboration policy is in the system prompt, and the system prompt and
// tool list are byte-identical for every member; identity is only in runtime context. Checked
// on the requests the model really receives while the keyless team scenario plays out.

const { model, requests } = recordingModel(new ScriptedModel({ delayMs: 0, playbook: teamPlaybook }));
const it = runtimeTest({ team: true, resolveModel: () => model });

const identityOf = (req: ModelRequest) => {
  for (const m of req.messages) {
    const who = m.role === "user" ? /Your name in the team is `([^`]+)`/.exec(m.text) : null;
    if (who) return who[1]!;
  }
  return null;
};

describe("the shared system prompt", () => {
  it("carries the collaboration policy, the same bytes and tools for the Lead and two teammates", async ({ rt }) => {
    const lead = asSessionId((await createSession(rt.db, { title: "Policy", model: { provider: "scripted", model: "keyless" } })).id);
    await promptSession(rt.db, lead, { text: "Write a haiku" });
    await waitFor(async () => turnEnds(await eventsOf(rt.db, lead)).length >= 1, 60_000, "the Lead's answer");

    const first = new Map<string, ModelRequest>();
    for (const r of requests) {
      const who = identityOf(r);
      if (r.purpose === "step" && who && !first.has(who)) first.set(who, r);
    }
    expect([...first.keys()].sort()).toEqual(["implementer", "lead", "researcher"]);
    const [a, b, c] = ["lead", "researcher", "implementer"].map((n) => first.get(n)!);
    expect(b!.system).toBe(a!.system);
    expect(c!.system).toBe(a!.system);
    expect(JSON.stringify(b!.tools)).toBe(JSON.stringify(a!.tools));
    expect(JSON.stringify(c!.tools)).toBe(JSON.stringify(a!.tools));
    expect(a!.tools).toHaveLength(18);

    // The policy says what SPEC.md §9 asks of it.
    expect(a!.system).toContain(COLLABORATION_POLICY);
    for (const rule of [/disjoint write_scopes/, /expected_revision/, /never send the same message again/, /starts an idle one and resumes an inactive one/, /wait_agent/, /waits for every teammate/, /expected_version/, /WORKSPACE_STALE_VERSION/, /memory_search/, /memory_propose/]) {
      expect(a!.system).toMatch(rule);
    }
    // No identity in the system prompt: names and roles come from runtime context only.
    for (const name of ["researcher", "implementer", lead]) expect(a!.system).not.toContain(name);
    for (const [name, req] of first) {
      const context = req.messages.filter((m) => m.role === "user" && m.text.includes("Your name in the team is"));
      expect(context.length, name).toBeGreaterThan(0);
    }
  });
});
