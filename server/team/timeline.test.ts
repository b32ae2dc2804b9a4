import { describe, expect } from "vitest";
import { z } from "zod";
import { inTx, type Db } from "../db/client";
import { asSessionId, newMessageId, newSessionId, newTurnId, type SessionId } from "../ids";
import type { Person } from "../people/person";
import type { EventPayload, PayloadOf } from "../runtime/events";
import { claimInbox } from "../testing/inbox";
import { appendEvents } from "../runtime/session-log";
import { toolCallKey } from "../runtime/tools";
import { databaseTest } from "../testing/fixtures";
import { createTestPerson } from "../testing/people";
import { newTestSession } from "../testing/runtime-harness";
import { DEFAULT_WORKSPACE_LIMITS } from "../../shared/limits";
import { writeFile } from "../workspace";
import { consumedStatement, deliverPending, queueMessage } from "./mailbox";
import { leadOf, type Membership } from "../members/membership";
import { createTask, updateTask, type TaskView } from "./task-board";
import { compactTask } from "./tools/views";
import {
  encodeCursor,
  followTimeline,
  newFollower,
  TimelineCursorString,
  TimelineEntrySchema,
  timelinePage,
  type TimelineEntry,
  type TimelineFilter,
} from "./timeline";

// The team timeline against real Postgres, on a team nothing drives: every row is written here
// the way its owner writes it (the log by appendEvents, the mailbox, the board, the action
// record), so each test knows exactly what the timeline must show.

const it = databaseTest();
let db: Db;
it.beforeAll(({ db: fileClient }) => {
  db = fileClient;
});

interface Team {
  owner: Person;
  lead: SessionId;
  mate: Membership;
}

async function newTeam(): Promise<Team> {
  const owner = await createTestPerson(db, "Ana Watcher");
  const lead = await newTestSession(db, "timeline team", owner);
  const sessionId = newSessionId();
  await db.session.create({ data: { id: sessionId, teamId: lead, memberName: "mate", title: "mate", model: { provider: "scripted", model: "keyless" } } });
  await db.teamMember.create({ data: { teamId: lead, name: "mate", sessionId, description: "d", context: "fresh", phase: "active" } });
  return { owner, lead, mate: { teamId: lead, sessionId, name: "mate", isLead: false } };
}

const append = (id: SessionId, ...payloads: EventPayload[]) => inTx(db, (tx) => appendEvents(tx, id, payloads, null));

/**
 * Waits until the clock has moved on, so the next row's created_at is later than the last
 * one's: entries of one millisecond are ordered by source, not by commit (DECISIONS.md).
 */
async function tick(): Promise<void> {
  const [row] = z.array(z.object({ now: z.date() })).parse(await db.$queryRaw`SELECT now() AS now`);
  const from = Math.max(Date.now(), row!.now.getTime());
  while (Date.now() <= from + 1) await new Promise((r) => setImmediate(r));
}

/** One model step of `member` calling `tool`, and its result (as the runtime logs them). */
function toolStep(turnId: string, tool: string, input: unknown, result: { output: unknown; errorCode?: string }): EventPayload[] {
  const toolCallId = `call_${Math.random().toString(36).slice(2)}`;
  return [
    {
      kind: "assistant_message",
      messageId: newMessageId(),
      turnId,
      step: 1,
      model: "scripted:keyless",
      text: "",
      toolCalls: [{ toolCallId, toolName: tool, input }],
      usage: { inputTokens: 1, outputTokens: 1 },
      interrupted: false,
    },
    { kind: "tool_result", turnId, toolCallId, toolName: tool, output: result.output, isError: !!result.errorCode, errorCode: result.errorCode },
  ];
}

/**
 * A small history: a person prompts the Lead, the Lead messages the mate, the mate creates and
 * claims a task, writes a file (and writes it again unchanged), fails to re-claim the task and
 * sends a message back; then a person completes the task on the board and edits the file.
 */
async function playHistory(t: Team) {
  const leadTurn = newTurnId();
  await append(t.lead, { kind: "turn_start", turnId: leadTurn }, {
    kind: "user_message",
    messageId: newMessageId(),
    text: "Plan the launch",
    source: { kind: "human", userId: t.owner.id, name: t.owner.name },
  });
  await tick();
  const toMate = await queueMessage(db, { teamId: t.lead, sender: { sessionId: t.lead, name: "lead" }, target: t.mate, content: "Please start" });
  await tick();
  const turn = newTurnId();
  await append(t.mate.sessionId, { kind: "turn_start", turnId: turn });
  await tick();
  const created = await createTask(db, t.mate, { subject: "Launch plan", description: "" });
  await append(t.mate.sessionId, ...toolStep(turn, "team_task_create", { subject: "Launch plan", description: "" }, { output: compactTask(created) }));
  await tick();
  const claimed = await updateTask(db, t.mate, { taskId: created.id, expectedRevision: 1, action: "claim" });
  const claim = { task_id: created.id, expected_revision: 1, action: "claim" };
  await append(t.mate.sessionId, ...toolStep(turn, "team_task_update", claim, { output: compactTask(claimed) }));
  await tick();
  // The version is the file entry; the tool call that made it is no entry of its own, but one
  // that changed nothing is a plain tool call.
  const path = `docs/${created.id}.md`;
  const write = { path, content: `Plan for ${created.id}` };
  const wrote = await writeFile(db, t.lead, { kind: "member", member: t.mate }, write, DEFAULT_WORKSPACE_LIMITS);
  await append(t.mate.sessionId, ...toolStep(turn, "workspace_write", write, { output: { path, version: wrote.version, bytes: wrote.bytes } }));
  await tick();
  const again = await writeFile(db, t.lead, { kind: "member", member: t.mate }, write, DEFAULT_WORKSPACE_LIMITS);
  expect(again.unchanged).toBe(true);
  await append(t.mate.sessionId, ...toolStep(turn, "workspace_write", write, { output: { path, version: again.version, bytes: again.bytes, unchanged: true } }));
  await tick();
  const refusal = { error: { code: "TEAM_TASK_STALE_REVISION", message: "stale" } };
  await append(t.mate.sessionId, ...toolStep(turn, "team_task_update", claim, { output: refusal, errorCode: "TEAM_TASK_STALE_REVISION" }));
  await tick();
  // A send_message's result is not an entry of its own: the mailbox row is.
  const send = toolStep(turn, "send_message", { target: "lead", message: "Done" }, { output: { status: "queued" } });
  const [call, result] = send as [PayloadOf<"assistant_message">, PayloadOf<"tool_result">];
  const reply = await queueMessage(db, {
    teamId: t.lead,
    sender: t.mate,
    target: { sessionId: t.lead, name: "lead" },
    content: "Done",
    toolCallKey: toolCallKey(call.messageId, result.toolCallId),
  });
  await append(t.mate.sessionId, ...send);
  await append(t.mate.sessionId, { kind: "turn_end", turnId: turn, reason: "completed" });
  await tick();
  const done = await updateTask(db, leadOf(t.lead), { taskId: created.id, expectedRevision: 2, action: "complete" }, { person: t.owner, teamId: t.lead });
  await tick();
  const edited = await writeFile(db, t.lead, { kind: "person", actor: { person: t.owner, teamId: t.lead } }, { path, content: "Reviewed" }, DEFAULT_WORKSPACE_LIMITS);
  return { toMate: toMate.messageId, reply: reply.messageId, task: created, done, path, edited };
}

/** What a reader of the timeline sees of an entry: kind, member and its gist. */
function gist(e: TimelineEntry): string {
  switch (e.kind) {
    case "turn":
      return `${e.member} turn ${e.phase}${e.reason ? ` ${e.reason}` : ""}`;
    case "prompt":
      return `${e.by?.name} prompted ${e.member}: ${e.text}`;
    case "message":
      return `${e.member} → ${e.to}: ${e.text} (${e.state})`;
    case "task":
      return `${e.by.kind === "person" ? e.by.name : e.member} ${e.action} ${e.taskId} ${e.subject} ${e.status ?? ""}`.trim();
    case "tool":
      return `${e.member} ${e.toolName} ${e.ok ? "ok" : e.errorCode}`;
    case "file":
      return `${e.by.name} ${e.deleted ? "deleted" : "wrote"} ${e.path} v${e.version}${e.taskIds.length ? ` for ${e.taskIds.join(",")}` : ""}`;
  }
}

/** Every entry, by reading the whole timeline in one page. */
async function everything(t: Team, filter?: TimelineFilter): Promise<TimelineEntry[]> {
  const page = await timelinePage(db, t.lead, { limit: 500, filter });
  expect(page.earlier).toBeNull();
  return page.entries;
}

describe("the team timeline", () => {
  it("interleaves turns, prompts, tool calls, messages and task changes of every member and person in commit order", async () => {
    const t = await newTeam();
    const { task, done, path, edited } = await playHistory(t);
    const entries = await everything(t);
    expect(entries.map(gist)).toEqual([
      "lead turn start",
      `${t.owner.name} prompted lead: Plan the launch`,
      "lead → mate: Please start (queued)",
      "mate turn start",
      `mate create ${task.id} Launch plan pending`,
      `mate claim ${task.id} Launch plan in_progress`,
      `mate wrote ${path} v1 for ${task.id}`,
      "mate workspace_write ok",
      "mate team_task_update TEAM_TASK_STALE_REVISION",
      "mate → lead: Done (queued)",
      "mate turn end completed",
      `${t.owner.name} complete ${task.id} Launch plan`,
      `${t.owner.name} wrote ${path} v2`,
    ]);
    for (const e of entries) expect(TimelineEntrySchema.parse(e)).toEqual(e);
    expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
    expect([...entries].sort((a, b) => (a.order < b.order ? -1 : 1))).toEqual(entries);

    // Each entry names the moment of its member's transcript: the event it came from, the
    // sender's reply that sent a message; a person's board change is in no transcript.
    const mateLog = await db.sessionEvent.findMany({ where: { sessionId: t.mate.sessionId }, orderBy: { seq: "asc" } });
    const claimEntry = entries.find((e) => e.kind === "task" && e.action === "claim")!;
    expect(mateLog.find((e) => e.seq === claimEntry.seq)).toMatchObject({ kind: "tool_result" });
    const reply = entries.find((e) => e.kind === "message" && e.member === "mate")!;
    const replyEvent = mateLog.find((e) => e.seq === reply.seq)!;
    expect(replyEvent.kind).toBe("assistant_message");
    expect(JSON.stringify(replyEvent.payload)).toContain("send_message");
    // The Lead's message was queued by no tool call (this test wrote it): no moment to link.
    expect(entries.find((e) => e.kind === "message" && e.member === "lead")?.seq).toBeNull();
    expect(entries.at(-2)).toMatchObject({ member: null, seq: null, by: { kind: "person", id: t.owner.id }, revision: null });
    expect(done.revision).toBe(3);
    // A file entry is the version: its author, the author's task, the scope warning it raised.
    expect(entries.find((e) => e.kind === "file" && e.member === "mate")).toMatchObject({
      seq: null,
      version: 1,
      deleted: false,
      by: { kind: "member", name: "mate", sessionId: t.mate.sessionId },
      taskIds: [task.id],
      warnings: [expect.stringContaining("outside your write scopes")],
    });
    expect(entries.at(-1)).toMatchObject({ kind: "file", member: null, version: edited.version, by: { kind: "person", id: t.owner.id } });
  });

  it("pages walk back from the newest entries through everything once, filtered or not", async () => {
    const t = await newTeam();
    await playHistory(t);
    await playHistory(t);
    const filters: (TimelineFilter | undefined)[] = [
      undefined,
      { members: ["mate"] },
      { kinds: ["task", "message"] },
      { members: ["lead"], kinds: ["turn"] },
      { members: ["mate"], kinds: ["file", "tool"] },
    ];
    for (const filter of filters) {
      const all = await everything(t, filter);
      for (const limit of [1, 3, 7]) {
        const seen: TimelineEntry[] = [];
        let page = await timelinePage(db, t.lead, { limit, filter });
        for (;;) {
          expect(page.entries.length).toBeLessThanOrEqual(limit);
          // Each page lies wholly before the one read after it.
          if (seen.length && page.entries.length) expect(page.entries.at(-1)!.order < seen[0]!.order).toBe(true);
          seen.unshift(...page.entries);
          if (!page.earlier) break;
          page = await timelinePage(db, t.lead, { limit, filter, before: TimelineCursorString.parse(page.earlier) });
        }
        expect(seen.map((e) => e.id), `${JSON.stringify(filter)} by ${limit}`).toEqual(all.map((e) => e.id));
      }
    }
    // The newest page is the end of the whole timeline.
    expect((await timelinePage(db, t.lead, { limit: 4 })).entries).toEqual((await everything(t)).slice(-4));
  });

  it("filters by member (a message counts for its sender and its target) and by kind", async () => {
    const t = await newTeam();
    await playHistory(t);
    const all = await everything(t);
    const ofMate = (e: TimelineEntry) => e.member === "mate" || (e.kind === "message" && e.to === "mate");
    expect(await everything(t, { members: ["mate"] })).toEqual(all.filter(ofMate));
    expect((await everything(t, { members: ["mate"] })).some((e) => e.kind === "message" && e.member === "lead")).toBe(true);
    expect(await everything(t, { kinds: ["task"] })).toEqual(all.filter((e) => e.kind === "task"));
    expect((await everything(t, { kinds: ["file"] })).map(gist)).toEqual(all.filter((e) => e.kind === "file").map(gist));
    expect((await everything(t, { kinds: ["file"] })).length).toBe(2);
    // A person's file change, like a board change, belongs to no member.
    expect((await everything(t, { kinds: ["file"], members: ["mate", "lead"] })).map((e) => e.member)).toEqual(["mate"]);
    // People's board changes belong to no member.
    expect((await everything(t, { kinds: ["task"], members: ["lead", "mate"] })).map(gist)).toEqual(
      all.filter((e) => e.kind === "task" && e.member !== null).map(gist),
    );
    expect(await everything(t, { members: ["lead"], kinds: ["prompt", "message"] })).toEqual(
      all.filter((e) => (e.kind === "prompt" && e.member === "lead") || (e.kind === "message" && (e.member === "lead" || e.to === "lead"))),
    );
    expect(await everything(t, { members: ["nobody"] })).toEqual([]);
  });

  it("follows live: the newest page, then each new entry once, a message again when its state changes", async () => {
    const t = await newTeam();
    const { toMate } = await playHistory(t);
    const follower = newFollower(null);
    const first = await followTimeline(db, t.lead, {}, follower);
    expect(first).toMatchObject({ type: "page", earlier: null });
    expect(first.entries).toEqual(await everything(t));
    const resumeFrom = encodeCursor(follower.cursor!);
    expect(await followTimeline(db, t.lead, {}, follower)).toEqual({ type: "entries", entries: [], more: false });

    // The Lead's message is delivered; then the mate starts a turn and takes it in.
    await deliverPending(db, t.mate.sessionId);
    let read = await followTimeline(db, t.lead, {}, follower);
    expect(read.entries.map(gist)).toEqual(["lead → mate: Please start (delivered)"]);
    const turn = newTurnId();
    await tick();
    await inTx(db, async (tx) => {
      const items = await claimInbox(tx, t.mate.sessionId, { firstStep: true });
      await appendEvents(tx, t.mate.sessionId, [{ kind: "turn_start", turnId: turn }, ...items.map((i) => ({ kind: "user_message" as const, messageId: i.id, text: i.text, source: i.source }))], null);
      await tx.$executeRaw(consumedStatement(t.mate.sessionId));
    });
    read = await followTimeline(db, t.lead, {}, follower);
    expect(read.entries.map(gist)).toEqual(["lead → mate: Please start (consumed)", "mate turn start"]);
    expect(read.entries[0]!.id).toBe(`m:${toMate}`);
    expect(await followTimeline(db, t.lead, {}, follower)).toMatchObject({ entries: [] });

    // A reader resuming from an older cursor gets everything since, and recent mail again
    // (the client merges by id): nothing is missing.
    const resumed = newFollower(TimelineCursorString.parse(resumeFrom));
    const again = await followTimeline(db, t.lead, {}, resumed);
    // (Session events have a seq and are never sent twice; recent mail and board changes may be.)
    expect(again.entries.filter((e) => e.seq !== null && e.kind !== "message").map(gist)).toEqual(["mate turn start"]);
    expect(again.entries.find((e) => e.id === `m:${toMate}`)).toMatchObject({ state: "consumed" });

    // A file change arrives as it commits.
    await writeFile(db, t.lead, { kind: "member", member: t.mate }, { path: "notes.md", content: "n" }, DEFAULT_WORKSPACE_LIMITS);
    expect((await followTimeline(db, t.lead, {}, follower)).entries.map(gist)).toEqual(["mate wrote notes.md v1"]);

    // A filtered follower sees only what its filter keeps, live too.
    const tasksOnly = newFollower(null);
    await followTimeline(db, t.lead, { kinds: ["task"] }, tasksOnly);
    await append(t.mate.sessionId, { kind: "turn_end", turnId: turn, reason: "aborted" });
    await updateTask(db, leadOf(t.lead), { taskId: "task-1", expectedRevision: 3, action: "reopen" }, { person: t.owner, teamId: t.lead });
    expect((await followTimeline(db, t.lead, { kinds: ["task"] }, tasksOnly)).entries.map(gist)).toEqual([`${t.owner.name} reopen task-1 Launch plan`]);
  });

  it("a member filter pages past many changes of files by others", async () => {
    const t = await newTeam();
    const person = { kind: "person" as const, actor: { person: t.owner, teamId: t.lead } };
    await writeFile(db, t.lead, { kind: "member", member: t.mate }, { path: "mine.md", content: "m" }, DEFAULT_WORKSPACE_LIMITS);
    for (let i = 0; i < 25; i++) await writeFile(db, t.lead, person, { path: `other-${i}.md`, content: "o" }, DEFAULT_WORKSPACE_LIMITS);
    const filter: TimelineFilter = { members: ["mate"], kinds: ["file"] };
    const found: TimelineEntry[] = [];
    let pages = 0;
    let page = await timelinePage(db, t.lead, { limit: 1, filter });
    for (;;) {
      pages++;
      found.push(...page.entries);
      if (!page.earlier) break;
      page = await timelinePage(db, t.lead, { limit: 1, filter, before: TimelineCursorString.parse(page.earlier) });
    }
    expect(found.map(gist)).toEqual(["mate wrote mine.md v1"]);
    // A read looks through a bounded number of changes: the walk took several pages.
    expect(pages).toBeGreaterThan(1);
  });

  it("a new teammate's entries arrive from its first event", async () => {
    const t = await newTeam();
    const follower = newFollower(null);
    expect((await followTimeline(db, t.lead, {}, follower)).entries).toEqual([]);
    const sessionId = newSessionId();
    await db.session.create({ data: { id: sessionId, teamId: t.lead, memberName: "late", title: "late", model: { provider: "scripted", model: "keyless" } } });
    await db.teamMember.create({ data: { teamId: t.lead, name: "late", sessionId, description: "d", context: "fresh", phase: "active" } });
    await append(sessionId, { kind: "turn_start", turnId: newTurnId() });
    expect((await followTimeline(db, t.lead, {}, follower)).entries.map(gist)).toEqual(["late turn start"]);
  });

  it("a row whose id was taken before a newer row committed still arrives live (the lookback)", async () => {
    const t = await newTeam();
    const task: TaskView = await createTask(db, leadOf(t.lead), { subject: "Racy", description: "" });
    const follower = newFollower(null);
    await followTimeline(db, t.lead, {}, follower);

    // A person's board change takes its record id, and commits only after a later one did.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    const slow = db.$transaction(async (tx) => {
      await tx.personAction.create({
        data: { teamId: t.lead, userId: t.owner.id, userName: t.owner.name, action: "task_changed", detail: { taskId: task.id, action: "edit" } },
      });
      holding();
      await gate;
    });
    await held;
    await updateTask(db, leadOf(t.lead), { taskId: task.id, expectedRevision: 1, action: "claim" }, { person: t.owner, teamId: t.lead });
    const read = await followTimeline(db, t.lead, {}, follower);
    expect(read.entries.map(gist)).toEqual([`${t.owner.name} claim ${task.id} Racy`]);
    release();
    await slow;
    expect((await followTimeline(db, t.lead, {}, follower)).entries.map(gist)).toEqual([`${t.owner.name} edit ${task.id} Racy`]);
    expect((await followTimeline(db, t.lead, {}, follower)).entries).toEqual([]);
  });

  it("cursors are opaque strings; anything that is not one is refused", () => {
    const cursor = { s: { [asSessionId("ses_a")]: 3 }, m: 1, a: 2, w: 5, t: 4 };
    expect(TimelineCursorString.parse(encodeCursor(cursor))).toEqual(cursor);
    // A cursor made before file changes were on the timeline still reads (from the first change).
    const older = Buffer.from(JSON.stringify({ s: {}, m: 1, a: 2, t: 4 })).toString("base64url");
    expect(TimelineCursorString.parse(older)).toEqual({ s: {}, m: 1, a: 2, w: 0, t: 4 });
    for (const bad of ["", "!!", "e30", Buffer.from('{"s":{},"m":-1,"a":0,"t":0}').toString("base64url"), Buffer.from("[1]").toString("base64url"), "x".repeat(20_000)]) {
      expect(TimelineCursorString.safeParse(bad).success, bad.slice(0, 20)).toBe(false);
    }
  });
});
