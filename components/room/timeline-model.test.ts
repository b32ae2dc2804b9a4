import { describe, expect, it } from "vitest";
import type { TimelineEntry } from "../api-types";
import { readRoomLocation } from "./room-url";
import { describeEntry, entryHref, memberHue, mergeEntries, TIMELINE_KINDS, toggled } from "./timeline-model";

const at = new Date(0);
const base = (id: string, order: string, member: string | null, seq: number | null) => ({ id, order, at, member, seq });
const turn = (id: string, order: string, member: string, phase: "start" | "end", reason: "completed" | "aborted" | null = null): TimelineEntry => ({
  ...base(id, order, member, 1),
  kind: "turn",
  phase,
  reason,
  error: null,
});
const message = (id: string, order: string, state: "queued" | "delivered" | "consumed"): TimelineEntry => ({
  ...base(id, order, "researcher", 7),
  kind: "message",
  messageId: id,
  to: "implementer",
  state,
  text: "You can start",
});

const file = (version: number, deleted: boolean, by: Extract<TimelineEntry, { kind: "file" }>["by"]): TimelineEntry => ({
  ...base(`w:${version}`, String(version), by.kind === "member" ? by.name : null, null),
  kind: "file",
  path: "docs/notes.md",
  version,
  deleted,
  bytes: 10,
  by,
  taskIds: [],
  warnings: [],
});

describe("mergeEntries", () => {
  it("appends new entries and keeps timeline order when a page or a late row lands in the middle", () => {
    const a = turn("a", "001", "lead", "start");
    const b = turn("b", "003", "lead", "end", "completed");
    const late = message("m", "002", "queued");
    expect(mergeEntries([a], [b])).toEqual([a, b]);
    expect(mergeEntries([a, b], [late]).map((e) => e.id)).toEqual(["a", "m", "b"]);
    // An earlier page goes in front.
    expect(mergeEntries([b], [a, late]).map((e) => e.id)).toEqual(["a", "m", "b"]);
  });

  it("replaces an entry sent again (a message's new state) instead of doubling it", () => {
    const queued = message("m", "002", "queued");
    const merged = mergeEntries([turn("a", "001", "lead", "start"), queued], [message("m", "002", "consumed")]);
    expect(merged).toHaveLength(2);
    expect(merged[1]).toMatchObject({ id: "m", state: "consumed" });
    const same: TimelineEntry[] = [queued];
    expect(mergeEntries(same, [])).toBe(same);
  });
});

describe("describeEntry", () => {
  it("says who did what, beginning with who acted", () => {
    const task = (action: "claim" | "reassign" | null, by: Extract<TimelineEntry, { kind: "task" }>["by"]): TimelineEntry => ({
      ...base("t", "1", by.kind === "member" ? by.name : null, by.kind === "member" ? 9 : null),
      kind: "task",
      taskId: "task-2",
      action,
      subject: "Implement it",
      status: "in_progress",
      revision: 2,
      ownerName: "implementer",
      by,
    });
    expect(describeEntry(task("claim", { kind: "member", name: "implementer" }))).toBe("implementer claimed task-2 Implement it");
    expect(describeEntry(task("reassign", { kind: "person", id: "u1", name: "Ana" }))).toBe("Ana reassigned task-2 Implement it to implementer");
    expect(describeEntry(task(null, { kind: "member", name: "lead" }))).toBe("lead changed task-2 Implement it");
    expect(describeEntry(turn("a", "1", "lead", "start"))).toBe("lead started a turn");
    expect(describeEntry(turn("a", "1", "lead", "end", "completed"))).toBe("lead finished a turn");
    expect(describeEntry(turn("a", "1", "researcher", "end", "aborted"))).toBe("researcher's turn was stopped");
    expect(describeEntry(message("m", "1", "delivered"))).toBe("researcher → implementer: You can start");
    expect(describeEntry({ ...base("x", "1", "implementer", 3), kind: "tool", toolName: "team_task_update", ok: false, errorCode: "TEAM_TASK_BLOCKED" })).toBe(
      "implementer called team_task_update: TEAM_TASK_BLOCKED",
    );
    expect(describeEntry({ ...base("x", "1", "lead", 3), kind: "tool", toolName: "wait_agent", ok: true, errorCode: null })).toBe("lead called wait_agent");
    expect(describeEntry({ ...base("p", "1", "lead", 2), kind: "prompt", by: { id: "u1", name: "Ana" }, text: "Build it" })).toBe("Ana prompted lead: Build it");
    expect(describeEntry(file(1, false, { kind: "member", name: "researcher", sessionId: "ses_r" }))).toBe("researcher created docs/notes.md (version 1)");
    expect(describeEntry(file(2, false, { kind: "person", id: "u1", name: "Ana" }))).toBe("Ana changed docs/notes.md (version 2)");
    expect(describeEntry(file(3, true, { kind: "member", name: "lead", sessionId: "ses_t" }))).toBe("lead deleted docs/notes.md (version 3)");
  });
});

describe("entryHref", () => {
  const here = readRoomLocation(new URLSearchParams("view=split&members=researcher,implementer"));
  it("links to the member's transcript at the entry's moment, keeping the split choice", () => {
    expect(entryHref("ses_t", here, message("m", "1", "queued"))).toBe("/teams/ses_t?member=researcher&members=researcher,implementer&seq=7");
    expect(entryHref("ses_t", readRoomLocation(new URLSearchParams()), turn("a", "1", "lead", "start"))).toBe("/teams/ses_t?seq=1");
  });
  it("links a file change to that version in the Files view", () => {
    expect(entryHref("ses_t", here, file(2, false, { kind: "person", id: "u1", name: "Ana" }))).toBe("/teams/ses_t?view=files&path=docs%2Fnotes.md&version=2");
  });
  it("gives no link to what no transcript holds (a person's board change)", () => {
    const byPerson: TimelineEntry = {
      ...base("a:1", "1", null, null),
      kind: "task",
      taskId: "task-1",
      action: "complete",
      subject: null,
      status: null,
      revision: null,
      ownerName: null,
      by: { kind: "person", id: "u1", name: "Ana" },
    };
    expect(entryHref("ses_t", here, byPerson)).toBeNull();
  });
});

describe("filters and lanes", () => {
  it("toggles a choice in and out", () => {
    expect(toggled(["lead"], "researcher")).toEqual(["lead", "researcher"]);
    expect(toggled(["lead", "researcher"], "lead")).toEqual(["researcher"]);
    expect(TIMELINE_KINDS).toEqual(["turn", "tool", "prompt", "message", "task", "file"]);
  });
  it("gives each member its own hue by roster place, and none to a person", () => {
    const names = ["lead", "researcher", "implementer"];
    const hues = names.map((n) => memberHue(names, n));
    expect(new Set(hues).size).toBe(3);
    expect(memberHue(names, null)).toBeNull();
    expect(memberHue(names, "gone")).toBeNull();
  });
});
