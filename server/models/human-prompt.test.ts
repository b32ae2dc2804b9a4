import { describe, expect } from "vitest";
import { parseEnv } from "../env";
import { asSessionId } from "../ids";
import { ScriptedModel } from "./scripted";
import type { ModelRequest } from "./types";
import { recordingModel } from "../testing/recording-model";
import { parseTeamMessage } from "../../shared/message-format";
import { teamPlaybook } from "../team/playbook";
import { runtimeTest } from "../testing/fixtures";
import { createTestPerson } from "../testing/people";
import { eventsOf, newTestSession, waitFor, waitForTurns } from "../testing/runtime-harness";
import { createCaller } from "../trpc/root";
import { isRuntimeContext } from "./runtime-context";
import { formatHumanPrompt, parseHumanPrompt } from "./human-prompt";
import { promptSession } from "../runtime/sessions";

// Who wrote a prompt, as the model sees it (docs/SPEC.md §13 Attribution): a person's prompt
// reaches the model with `From <display name>:` as its first line, while the log keeps the text
// as typed and the person in the message's source. Team mail and runtime context read as before.

/** The keyless team model, recording every request it is sent. */
const { model, requests } = recordingModel(new ScriptedModel({ delayMs: 0, playbook: teamPlaybook }));

const it = runtimeTest({ team: true, resolveModel: () => model });

const userTexts = (r: ModelRequest) => r.messages.flatMap((m) => (m.role === "user" ? [m.text] : []));

describe("the From header", () => {
  it("heads a person's prompt for the model; the log keeps the text as typed and the person", async ({ rt }) => {
    const ana = await createTestPerson(rt.db, "Ana");
    const caller = createCaller({ db: rt.db, env: parseEnv({}), hub: rt.hub, runtime: rt.runtime, person: ana });
    const team = asSessionId((await caller.session.create({ title: "Picnic" })).id);
    const typed = "Plan a picnic\nfor six people";
    const item = await caller.session.prompt({ sessionId: team, text: `  ${typed}  ` });
    expect(item.source).toEqual({ kind: "human", userId: ana.id, name: "Ana" });
    const events = await waitForTurns(rt.db, team, 1, 20_000);

    const logged = events.flatMap((e) => (e.payload.kind === "user_message" ? [e.payload] : []));
    const prompt = logged.find((m) => m.source.kind === "human");
    expect(prompt).toMatchObject({ text: typed, source: { kind: "human", userId: ana.id, name: "Ana" } });
    expect(prompt!.text).not.toMatch(/^From /);

    const first = requests.find((r) => userTexts(r).some((t) => t.includes(typed)));
    expect(first).toBeDefined();
    const texts = userTexts(first!);
    expect(texts).toContain(`From Ana:\n${typed}`);
    expect(texts.filter((t) => t.startsWith("From Ana:\n"))).toHaveLength(1);
    // The runtime context beside it is untouched.
    const context = texts.filter((t) => isRuntimeContext(t));
    expect(context.length).toBeGreaterThan(0);
    for (const t of context) expect(t).not.toMatch(/^From /);
  });

  it("leaves team messages as the mailbox wrote them", async ({ rt }) => {
    const bo = await createTestPerson(rt.db, "Bo");
    const caller = createCaller({ db: rt.db, env: parseEnv({}), hub: rt.hub, runtime: rt.runtime, person: bo });
    const team = asSessionId((await caller.session.create({ title: "Mail" })).id);
    await caller.team.addTeammate({ teamId: team, name: "reporter", description: "Reports", prompt: "Report back" });
    // The teammate reports to the Lead; the Lead's next request carries the message.
    const mail = await waitFor(
      () => requests.flatMap(userTexts).find((t) => parseTeamMessage(t)?.senderName === "reporter"),
      20_000,
      "the Lead to be sent the reporter's message",
    );
    expect(mail).not.toMatch(/^From /);
    const delivered = (await eventsOf(rt.db, team)).find((e) => e.payload.kind === "user_message" && e.payload.source.kind === "team");
    expect(delivered?.payload).toMatchObject({ text: mail });
  });

  it("is not added to a prompt that names no person", async ({ rt }) => {
    const id = await newTestSession(rt.db, "nobody");
    await promptSession(rt.db, id, { text: "An unsigned prompt" });
    await waitForTurns(rt.db, id, 1, 20_000);
    // Every step of the turn sends the history again: the prompt each time, as typed.
    const sent = requests.flatMap(userTexts).filter((t) => parseHumanPrompt(t).body === "An unsigned prompt");
    expect(sent.length).toBeGreaterThan(0);
    expect([...new Set(sent)]).toEqual(["An unsigned prompt"]);
  });
});

describe("formatHumanPrompt / parseHumanPrompt", () => {
  it("round-trip the name and the text, which may have lines of its own (and look like a header)", () => {
    for (const [name, text] of [
      ["Ana", "hello"],
      ["Ana María", "line one\nline two"],
      ["Dr. Who: the 2nd", "x"],
      ["Ana", "From Bob:\nI am not Bob"],
      ["Ana", ""],
    ] as const) {
      const formatted = formatHumanPrompt(name, text);
      expect(formatted.split("\n")[0]).toBe(`From ${name}:`);
      expect(parseHumanPrompt(formatted)).toEqual({ from: name, body: text });
    }
    expect(parseHumanPrompt("no header here")).toEqual({ from: null, body: "no header here" });
  });
});
