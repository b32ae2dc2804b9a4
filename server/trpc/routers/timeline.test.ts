import { TRPCError } from "@trpc/server";
import { describe, expect } from "vitest";
import { AppError } from "../../errors";
import { SCENARIO_FILES, teamPlaybook } from "../../team/playbook";
import type { TimelineEntry } from "../../team/timeline";
import { callerTest } from "../../testing/app-tests";
import { waitFor } from "../../testing/runtime-harness";
import type { TrpcContext } from "../init";
import { createCaller } from "../root";
import type { TimelineLiveMessage } from "../../live/feed-readers";

// The timeline procedures in-process, with the keyless team playing (SPEC.md §11): the live
// feed shows both teammates' work as it commits, converges on what a page reads, and resumes
// from its last id.

const it = callerTest({ team: true, playbook: teamPlaybook, delayMs: 2 }, "Ana Owner");

/** A live timeline feed read in the background: every message with its id, and the entries merged by id. */
function follow(ctx: TrpcContext, input: { teamId: string; lastEventId: string | null }) {
  const abort = new AbortController();
  const received: { id: string; data: TimelineLiveMessage }[] = [];
  const entries = new Map<string, TimelineEntry>();
  const done = (async () => {
    try {
      for await (const raw of (await createCaller(ctx, { signal: abort.signal }).timeline.live(input)) as AsyncIterable<unknown>) {
        const [id, data] = raw as [string, TimelineLiveMessage];
        received.push({ id, data });
        if (data.type === "page") entries.clear();
        for (const e of data.entries) entries.set(e.id, e);
      }
    } catch {
      // aborted
    }
  })();
  return {
    received,
    /** What the room shows: the merged entries in timeline order. */
    shown: () => [...entries.values()].sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0)),
    async stop() {
      abort.abort();
      await done;
    },
  };
}

const indexOf = (list: TimelineEntry[], what: string, test: (e: TimelineEntry) => boolean) => {
  const i = list.findIndex(test);
  expect(i, what).toBeGreaterThanOrEqual(0);
  return i;
};
const task = (member: string, action: string, taskId: string) => (e: TimelineEntry) =>
  e.kind === "task" && e.member === member && e.action === action && e.taskId === taskId;

describe("timeline procedures", () => {
  it("the keyless scenario arrives live: both teammates' work interleaved in causal order, as a page reads it", async ({ ctx, trpc }) => {
    const lead = await trpc.session.create({ title: "Timeline run" });
    const feed = follow(ctx, { teamId: lead.id, lastEventId: null });
    await waitFor(() => feed.received.length >= 1, 5_000, "the first page");
    expect(feed.received[0]!.data).toEqual({ type: "page", entries: [], earlier: null });

    await trpc.session.prompt({ sessionId: lead.id, text: "Build a tiny todo app" });
    const isFinal = (e: TimelineEntry) => e.kind === "turn" && e.member === "lead" && e.phase === "end";
    const allConsumed = (l: TimelineEntry[]) => l.filter((e) => e.kind === "message").length === 2 && l.every((e) => e.kind !== "message" || e.state === "consumed");
    await waitFor(() => feed.shown().some(isFinal) && allConsumed(feed.shown()), 60_000, "the Lead's answer and both messages consumed");
    // Nothing more is on its way once the page agrees (the Lead's turn end is its last event).
    const page = await trpc.timeline.page({ teamId: lead.id, limit: 500 });
    await waitFor(() => JSON.stringify(feed.shown()) === JSON.stringify(page.entries), 10_000, "the live view to match a page");
    await feed.stop();
    const shown = feed.shown();

    // Arrived piece by piece while the team worked, each session entry once.
    expect(feed.received.filter((r) => r.data.type === "entries").length).toBeGreaterThan(3);
    const sent = feed.received.flatMap((r) => r.data.entries);
    const once = sent.filter((e) => e.kind !== "message" && e.seq !== null).map((e) => e.id);
    expect(new Set(once).size).toBe(once.length);
    expect(new Set(sent.filter((e) => e.kind === "message").map((e) => e.kind === "message" && `${e.id} ${e.state}`)).size).toBe(
      sent.filter((e) => e.kind === "message").length,
    );

    expect(new Set(shown.map((e) => e.member))).toEqual(new Set(["lead", "researcher", "implementer"]));
    expect(shown[0]).toMatchObject({ kind: "turn", member: "lead", phase: "start" });
    expect(shown[1]).toMatchObject({ kind: "prompt", member: "lead", by: { id: ctx.person!.id, name: "Ana Owner" }, text: "Build a tiny todo app" });
    expect(shown.filter((e) => e.kind === "task" && e.member === "researcher").map((e) => e.kind === "task" && [e.action, e.taskId, e.revision])).toEqual([
      ["create", "task-1", 1],
      ["claim", "task-1", 2],
      ["complete", "task-1", 3],
    ]);
    const researched = indexOf(shown, "task-1 completed", task("researcher", "complete", "task-1"));
    const claimed = indexOf(shown, "task-2 claimed", task("implementer", "claim", "task-2"));
    expect(indexOf(shown, "task-2 created", task("implementer", "create", "task-2"))).toBeLessThan(claimed);
    expect(researched).toBeLessThan(claimed);
    expect(claimed).toBeLessThan(indexOf(shown, "task-2 completed", task("implementer", "complete", "task-2")));
    // The researcher's message entered the implementer's running turn, before that turn ended.
    const toImplementer = indexOf(shown, "researcher → implementer", (e) => e.kind === "message" && e.member === "researcher" && e.to === "implementer");
    const implementerDone = indexOf(shown, "the implementer's turn end", (e) => e.kind === "turn" && e.member === "implementer" && e.phase === "end");
    expect(toImplementer).toBeLessThan(implementerDone);
    const toLead = indexOf(shown, "implementer → lead", (e) => e.kind === "message" && e.member === "implementer" && e.to === "lead");
    expect(toLead).toBeLessThan(shown.findLastIndex(isFinal));
    // The files each wrote while its task was in progress, with that task.
    const file = (member: string, path: string, version: number) => (e: TimelineEntry) =>
      e.kind === "file" && e.member === member && e.path === path && e.version === version;
    const notes = indexOf(shown, "the research notes", file("researcher", SCENARIO_FILES.notes, 1));
    expect(shown[notes]).toMatchObject({ taskIds: ["task-1"], warnings: [] });
    expect(indexOf(shown, "task-1 claimed", task("researcher", "claim", "task-1"))).toBeLessThan(notes);
    expect(notes).toBeLessThan(researched);
    const draft = indexOf(shown, "the result's draft", file("implementer", SCENARIO_FILES.result, 1));
    const checked = indexOf(shown, "the result, checked", file("implementer", SCENARIO_FILES.result, 2));
    expect(shown[checked]).toMatchObject({ taskIds: ["task-2"] });
    expect(claimed).toBeLessThan(draft);
    expect(draft).toBeLessThan(checked);
    expect(checked).toBeLessThan(indexOf(shown, "task-2 completed", task("implementer", "complete", "task-2")));
    // Task tool results are task entries, sends message entries, file changes file entries:
    // none is also a tool entry.
    expect(shown.filter((e) => e.kind === "tool" && e.ok && /^(team_task_(create|update)|send_message|workspace_(write|edit|delete))$/.test(e.toolName))).toEqual([]);
    expect(shown.some((e) => e.kind === "tool" && e.member === "lead" && e.toolName === "workspace_list" && e.ok)).toBe(true);
    expect(shown.some((e) => e.kind === "tool" && e.member === "lead" && e.toolName === "spawn_teammate" && e.ok)).toBe(true);

    // Resuming from the last id: only what is new arrives (recent mail may come again).
    const resumed = follow(ctx, { teamId: lead.id, lastEventId: feed.received.at(-1)!.id });
    await trpc.session.prompt({ sessionId: lead.id, text: "How did it go?" });
    await waitFor(() => resumed.shown().filter(isFinal).length >= 1 && resumed.shown().some((e) => e.kind === "prompt"), 30_000, "the second turn");
    await resumed.stop();
    const fresh = resumed.shown().filter((e) => e.kind !== "message");
    expect(fresh.some((e) => shown.some((s) => s.id === e.id))).toBe(false);
    expect(fresh.map((e) => e.kind === "prompt" && e.text).filter(Boolean)).toEqual(["How did it go?"]);
  });

  it("pages go back from a cursor; a malformed cursor is INVALID_INPUT", async ({ trpc }) => {
    const lead = await trpc.session.create({ title: "Paged" });
    await trpc.session.prompt({ sessionId: lead.id, text: "/tool team_task_list {}" });
    await waitFor(async () => (await trpc.timeline.page({ teamId: lead.id })).entries.some((e) => e.kind === "turn" && e.phase === "end"), 20_000, "a turn");
    const all = (await trpc.timeline.page({ teamId: lead.id })).entries;
    const last = await trpc.timeline.page({ teamId: lead.id, limit: 1 });
    expect(last.entries).toEqual(all.slice(-1));
    const before = await trpc.timeline.page({ teamId: lead.id, limit: 500, before: last.earlier! });
    expect(before).toEqual({ entries: all.slice(0, -1), earlier: null });
    expect(all.map((e) => e.kind)).toEqual(["turn", "prompt", "tool", "turn"]);

    const refused = await trpc.timeline.page({ teamId: lead.id, before: "bm90IGEgY3Vyc29y" }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(TRPCError);
    expect(refused).toMatchObject({ code: "BAD_REQUEST" });
    expect((refused as TRPCError).cause).not.toBeInstanceOf(AppError);
  });
});
