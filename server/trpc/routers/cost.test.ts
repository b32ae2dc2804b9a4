import { TRPCError } from "@trpc/server";
import { describe, expect } from "vitest";
import { abortableWait, abortError } from "../../abortable";
import { parseEnv } from "../../env";
import type { AppError } from "../../errors";
import { asSessionId } from "../../ids";
import { sumSpend } from "../../models/catalog";
import { priceOf } from "../../models/registry";
import { defaultPlaybook, ScriptedModel } from "../../models/scripted";
import type { LanguageModel } from "../../models/types";
import { SPEND_COLUMNS, spendOf } from "../../runtime/sessions";
import { callerTest } from "../../testing/app-tests";
import { waitFor, waitForTurns } from "../../testing/runtime-harness";
import { createCaller } from "../root";
import { applyTeamMessage } from "../../../shared/team-delta";
import type { TeamMessage, TeamState } from "./team";

// Models and cost through the routers: the offered models with labels and prices, a teammate
// added with one of them, and spend per member and per team in the roster, the team feed (at
// every step, not only at turn ends) and the team list.

const env = parseEnv({
  // A second provider is offered once configured; its requests are never made here (the
  // runtime below runs every model with the keyless one).
  OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
  MODELS: JSON.stringify([
    { provider: "scripted", model: "keyless", label: "Keyless demo", price: { input: 2, output: 8 } },
    { provider: "openai-compatible", model: "gpt-small", label: "GPT small", price: { input: 1, output: 4, cachedInput: 0.1 } },
  ]),
});

// While `gate` is set, a step that follows a tool result waits for it: the turn is held
// between two steps for exactly as long as a test needs.
let gate: { promise: Promise<void>; open: () => void } | null = null;
const scripted = new ScriptedModel({ delayMs: 0, playbook: defaultPlaybook });
const gated: LanguageModel = {
  id: scripted.id,
  async *stream(request, signal) {
    const held = gate?.promise;
    if (held && request.messages.at(-1)?.role === "tool" && (await abortableWait({ until: held, signal })) === "aborted") throw abortError();
    yield* scripted.stream(request, signal);
  },
};

const it = callerTest({ team: { provisioningGraceMs: 60_000 }, resolveModel: () => gated, priceOf: (c) => priceOf(env, c) }, "Cora Cost", env);

describe("offered models", () => {
  it("are listed with labels and prices", async ({ trpc }) => {
    expect(await trpc.session.models()).toEqual([
      { provider: "scripted", model: "keyless", label: "Keyless demo", price: { input: 2, output: 8 } },
      { provider: "openai-compatible", model: "gpt-small", label: "GPT small", price: { input: 1, output: 4, cachedInput: 0.1 } },
    ]);
  });

  it("can be chosen for a teammate added from the room; anything else is MODEL_UNAVAILABLE and adds nobody", async ({ rt, trpc }) => {
    const lead = await trpc.session.create({ title: "Picks models" });
    const added = await trpc.team.addTeammate({ teamId: lead.id, name: "small", description: "d", prompt: "p", model: "openai-compatible:gpt-small" });
    expect(added.model).toEqual({ provider: "openai-compatible", model: "gpt-small" });
    const same = await trpc.team.addTeammate({ teamId: lead.id, name: "same", description: "d", prompt: "p" });
    expect(same.model).toEqual({ provider: "scripted", model: "keyless" });

    const refused = await trpc.team
      .addTeammate({ teamId: lead.id, name: "big", description: "d", prompt: "p", model: "anthropic:claude-big" })
      .then(() => null, (e: unknown) => e);
    expect(refused).toBeInstanceOf(TRPCError);
    expect((refused as TRPCError).code).toBe("BAD_REQUEST");
    expect(((refused as TRPCError).cause as AppError).code).toBe("MODEL_UNAVAILABLE");
    expect(await rt.db.teamMember.count({ where: { teamId: lead.id } })).toBe(2);
    expect((await trpc.team.roster({ teamId: lead.id })).map((m) => m.name)).toEqual(["lead", "small", "same"]);
  });
});

describe("spend", () => {
  it("is shown per member and per team in the roster, the live team state (at each step) and the team list", async ({ rt, ctx, trpc }) => {
    const lead = await trpc.session.create({ title: "Spends" });
    const leadId = asSessionId(lead.id);
    const mate = await trpc.team.addTeammate({ teamId: lead.id, name: "mate", description: "d", prompt: "Say hi", model: "openai-compatible:gpt-small" });
    await waitForTurns(rt.db, asSessionId(mate.sessionId), 1);

    const abort = new AbortController();
    const states: TeamState[] = [];
    const iterable = await createCaller(ctx, { signal: abort.signal }).team.live({ teamId: lead.id, lastEventId: null });
    const pump = (async () => {
      try {
        let state: TeamState | null = null;
        for await (const raw of iterable as AsyncIterable<unknown>) {
          state = applyTeamMessage(state, (raw as [string, TeamMessage])[1]);
          if (state) states.push(state);
        }
      } catch {
        // aborted
      }
    })();
    try {
      await waitFor(() => states.length >= 1, 5_000, "the first snapshot");
      expect(states[0]!.members[0]!.spend.costNanos).toBe(0);

      // The Lead's first step (a tool call) is recorded, then its second step is held: the feed
      // shows the first step's spend while the turn is still open. (Sooner than the feed's own
      // 5 s re-read: the step's spend notified it.)
      let open!: () => void;
      gate = { promise: new Promise<void>((r) => (open = r)), open: () => open() };
      await trpc.session.prompt({ sessionId: lead.id, text: "/tool list_agents {}\nWho is here?" });
      const mid = await waitFor(() => states.find((s) => s.members[0]!.spend.costNanos > 0), 3_000, "the first step's spend in the feed");
      expect(mid.members[0]!.status).toBe("running");
      expect((await rt.db.session.findUniqueOrThrow({ where: { id: leadId }, select: { activeTurnId: true } })).activeTurnId).not.toBeNull();
      gate.open();
      gate = null;
      await waitForTurns(rt.db, leadId, 1);

      const counters = await Promise.all(
        [lead.id, mate.sessionId].map(async (id) => spendOf(await rt.db.session.findUniqueOrThrow({ where: { id }, select: SPEND_COLUMNS }))),
      );
      const [leadSpend, mateSpend] = counters as [(typeof counters)[0], (typeof counters)[0]];
      expect(leadSpend.costNanos).toBeGreaterThan(mid.members[0]!.spend.costNanos);
      expect(mateSpend.costNanos).toBeGreaterThan(0);
      // Each at its own model's price: the Lead $2/$8, the teammate $1/$4 per million tokens.
      expect(mateSpend.costNanos).toBe(mateSpend.inputTokens * 1_000 + mateSpend.outputTokens * 4_000);
      const total = sumSpend(counters);

      const roster = await trpc.team.roster({ teamId: lead.id });
      expect(roster.map((m) => m.spend)).toEqual([leadSpend, mateSpend]);
      const final = await waitFor(() => states.find((s) => s.spend.costNanos === total.costNanos), 5_000, "the team total in the feed");
      expect(final.spend).toEqual(total);
      expect(final.members.map((m) => m.spend)).toEqual([leadSpend, mateSpend]);
      expect((await trpc.team.list()).find((t) => t.id === lead.id)?.spend).toEqual(total);
    } finally {
      gate?.open();
      gate = null;
      abort.abort();
      await pump;
    }
  });
});
