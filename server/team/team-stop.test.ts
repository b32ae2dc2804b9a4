import { describe, expect } from "vitest";
import { parseEnv } from "../env";
import type { SessionId } from "../ids";
import type { Playbook } from "../models/scripted";
import { isRuntimeContext } from "../models/runtime-context";
import { runtimeTest } from "../testing/fixtures";
import { createTestPerson } from "../testing/people";
import { eventsOf, newTestSession, turnEnds, waitFor } from "../testing/runtime-harness";
import { createCaller } from "../trpc/root";
import { parseIdentity } from "./identity";

// "Stop the team" with three members working (each sits in wait_agent, holding its turn open):
// one action ends every turn as a Stop does, keeps what was queued, records who did it, and
// nothing runs again until a person prompts.

/** The Lead spawns two teammates; then every member waits for the team, turn after turn. */
const waitingTeam: Playbook = (request) => {
  const context = request.messages.find((m) => m.role === "user" && isRuntimeContext(m.text));
  const who = context?.role === "user" ? parseIdentity(context.text) : null;
  const acted = request.messages.some((m) => m.role === "assistant" && m.toolCalls.length > 0);
  if (who?.role === "lead" && !acted) {
    return {
      text: "Forming the team.",
      toolCalls: ["alpha", "beta"].map((name) => ({ toolName: "spawn_teammate", input: { name, description: "waits", context: "fresh", prompt: "Wait for the team." } })),
    };
  }
  return { text: "Waiting for the team.", toolCalls: [{ toolName: "wait_agent", input: { timeout_ms: 600_000 } }] };
};

const it = runtimeTest({ team: true, playbook: waitingTeam, delayMs: 1 });

describe("stopping the whole team", () => {
  it("ends every working member's turn at once, keeps queued input, and stays stopped until prompted", async ({ rt }) => {
    const ana = await createTestPerson(rt.db, "Ana");
    const trpc = createCaller({ db: rt.db, env: parseEnv({}), hub: rt.hub, runtime: rt.runtime, person: ana });
    const lead = await newTestSession(rt.db, "stop me", ana);
    await trpc.session.prompt({ sessionId: lead, text: "Form a team and wait" });

    const members = async () => rt.db.session.findMany({ where: { teamId: lead }, select: { id: true, memberName: true, activeTurnId: true, parked: true } });
    await waitFor(async () => {
      const all = await members();
      return all.length === 3 && all.every((m) => m.activeTurnId !== null);
    }, 30_000, "all three members working");
    // A prompt queued for the Lead's next turn, which the stop must not throw away.
    await trpc.session.prompt({ sessionId: lead, text: "Then do this next" });

    expect(await trpc.team.stop({ teamId: lead })).toEqual({ stopped: ["alpha", "beta", "lead"] });
    await waitFor(async () => (await members()).every((m) => m.activeTurnId === null), 10_000, "every turn ended");

    for (const m of await members()) {
      const ends = turnEnds(await eventsOf(rt.db, m.id as SessionId));
      expect(ends.at(-1)?.reason, m.memberName ?? "lead").toBe("aborted");
      expect(m.parked, m.memberName ?? "lead").toBe(true);
    }
    expect(await rt.db.inboxItem.count({ where: { sessionId: lead } })).toBe(1);
    const record = await rt.db.personAction.findFirstOrThrow({ where: { teamId: lead, action: "team_stopped" } });
    expect(record).toMatchObject({ userId: ana.id, userName: "Ana", detail: { members: ["alpha", "beta", "lead"] } });

    // Nobody runs while stopped; a new prompt resumes the Lead with both prompts.
    const turnsBefore = turnEnds(await eventsOf(rt.db, lead)).length;
    await trpc.session.prompt({ sessionId: lead, text: "Carry on" });
    await waitFor(async () => (await eventsOf(rt.db, lead)).filter((e) => e.payload.kind === "turn_start").length > turnsBefore, 10_000, "the Lead's next turn");
    const texts = (await eventsOf(rt.db, lead)).flatMap((e) => (e.payload.kind === "user_message" ? [e.payload.text] : []));
    expect(texts.some((t) => t.includes("Then do this next"))).toBe(true);
  });
});
