import { TRPCError } from "@trpc/server";
import { describe, expect } from "vitest";
import { AppError } from "../../errors";
import { asSessionId } from "../../ids";
import { teamPlaybook } from "../../team/playbook";
import { callerTest } from "../../testing/app-tests";
import { waitFor } from "../../testing/runtime-harness";
import { createCaller } from "../root";
import { applyTeamMessage } from "../../../shared/team-delta";
import type { TeamMessage, TeamState } from "./team";

// The team router in-process: a human acts with Lead authority; stale revisions conflict.

const it = callerTest({ team: true, playbook: teamPlaybook }, "Ana Owner");

async function expectCode(p: Promise<unknown>, code: TRPCError["code"], appCode: string) {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(TRPCError);
  expect((e as TRPCError).code).toBe(code);
  expect(((e as TRPCError).cause as AppError).code).toBe(appCode);
}

describe("team router", () => {
  it("adds a teammate as the Lead, lists the roster, and reserves names forever", async ({ trpc: caller }) => {
    const lead = await caller.session.create({ title: "Humans add teammates" });
    const added = await caller.team.addTeammate({ teamId: lead.id, name: "writer", description: "Writes", prompt: "Write a haiku" });
    expect(added).toMatchObject({ name: "writer", role: "teammate", phase: "active", context: "fresh" });
    const roster = await caller.team.roster({ teamId: lead.id });
    expect(roster.map((m) => m.name)).toEqual(["lead", "writer"]);

    await expectCode(
      caller.team.addTeammate({ teamId: lead.id, name: "writer", description: "again", prompt: "x" }),
      "CONFLICT",
      "TEAM_MEMBER_NAME_TAKEN",
    );
    await expectCode(
      caller.team.addTeammate({ teamId: lead.id, name: "Bad_Name", description: "x", prompt: "x" }),
      "BAD_REQUEST",
      "TEAM_INVALID_MEMBER_NAME",
    );
    // The generic teammate reports back to the lead: its message goes queued → consumed.
    await waitFor(
      async () => (await caller.team.messages({ teamId: lead.id })).some((m) => m.senderName === "writer" && m.state === "consumed"),
      20_000,
      "the writer's report to be consumed",
    );
  });

  it("updates tasks with the revision the person saw, and shows a stale one as a conflict", async ({ rt, trpc: caller }) => {
    const lead = await caller.session.create({ title: "Board" });
    const leadId = asSessionId(lead.id);
    const { createTask } = await import("../../team/task-board");
    const { leadOf } = await import("../../members/membership");
    const task = await createTask(rt.db, leadOf(leadId), { subject: "Ship it", description: "" });
    const claimed = await caller.team.updateTask({ teamId: lead.id, taskId: task.id, expectedRevision: 1, action: "claim" });
    expect(claimed).toMatchObject({ status: "in_progress", revision: 2, ownerName: "lead" });

    await expectCode(
      caller.team.updateTask({ teamId: lead.id, taskId: task.id, expectedRevision: 1, action: "complete" }),
      "CONFLICT",
      "TEAM_TASK_STALE_REVISION",
    );
    expect((await caller.team.task({ teamId: lead.id, taskId: task.id })).revision).toBe(2);
    await expectCode(caller.team.task({ teamId: lead.id, taskId: "task-99" }), "NOT_FOUND", "TEAM_TASK_NOT_FOUND");
  });

  it("streams the team state live and resumes without repeating an unchanged state", async ({ ctx, trpc: caller }) => {
    const lead = await caller.session.create({ title: "Live team" });
    const abort = new AbortController();
    const live = createCaller(ctx, { signal: abort.signal });
    const received: { id: string; state: TeamState; message: TeamMessage }[] = [];
    const iterable = await live.team.live({ teamId: lead.id, lastEventId: null });
    const pump = (async () => {
      try {
        let state: TeamState | null = null;
        for await (const raw of iterable as AsyncIterable<unknown>) {
          const [id, message] = raw as [string, TeamMessage];
          state = applyTeamMessage(state, message);
          if (state) received.push({ id, state, message });
        }
      } catch {
        // aborted
      }
    })();
    await waitFor(() => received.length >= 1, 5_000, "the first snapshot");
    await caller.team.addTeammate({ teamId: lead.id, name: "helper", description: "Helps", prompt: "Help out" });
    await waitFor(() => received.some((r) => r.state.members.some((m) => m.name === "helper")), 10_000, "the new member");
    abort.abort();
    await pump;
    const ids = received.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    // The whole state once, then only what changed: the new member's patch has no people,
    // presence or workspace (nothing of those changed).
    expect(received.map((r) => r.message.type)).toEqual(["state", ...received.slice(1).map(() => "patch")]);
    const joined = received.find((r) => r.message.type === "patch" && r.message.patch.members?.some((m) => m.name === "helper"))!.message;
    expect(joined.type === "patch" && Object.keys(joined.patch).filter((k) => ["people", "presence", "workspace", "myRole"].includes(k))).toEqual([]);
    // Resuming with the latest id sends nothing until something changes.
    const abort2 = new AbortController();
    const again = createCaller(ctx, { signal: abort2.signal });
    const current = await (async () => {
      const it2 = await again.team.live({ teamId: lead.id, lastEventId: null });
      for await (const raw of it2 as AsyncIterable<unknown>) return (raw as [string, TeamMessage])[0];
      return "";
    })();
    abort2.abort();
    const abort3 = new AbortController();
    const resumed = createCaller(ctx, { signal: abort3.signal });
    const got: string[] = [];
    const gotMessages: TeamMessage[] = [];
    const it3 = await resumed.team.live({ teamId: lead.id, lastEventId: current });
    const pump3 = (async () => {
      try {
        for await (const raw of it3 as AsyncIterable<unknown>) {
          got.push((raw as [string, TeamMessage])[0]);
          gotMessages.push((raw as [string, TeamMessage])[1]);
        }
      } catch {
        // aborted
      }
    })();
    // Trigger a change so the resumed feed has something new to send.
    await caller.team.addTeammate({ teamId: lead.id, name: "second-helper", description: "Helps too", prompt: "Help more" });
    // The helper's own activity may send patches first (its status, its spend): wait for the one
    // that shows the new member.
    const showsSecond = () => gotMessages.some((m) => m.type === "patch" && m.patch.members?.some((x) => x.name === "second-helper"));
    await waitFor(showsSecond, 10_000, "the new member's patch");
    abort3.abort();
    await pump3;
    // The state the client already had (id `current`) is never sent again, and the resumed
    // feed sends patches (the changes since that id), not the whole state.
    expect(got).not.toContain(current);
    expect(gotMessages[0]!.type).toBe("patch");

    // An id this server never gave (another process, a restart) gets the whole state.
    const abort4 = new AbortController();
    const stranger = await createCaller(ctx, { signal: abort4.signal }).team.live({ teamId: lead.id, lastEventId: "elsewhere.3" });
    for await (const raw of stranger as AsyncIterable<unknown>) {
      expect((raw as [string, TeamMessage])[1].type).toBe("state");
      break;
    }
    abort4.abort();
  });
});
