import { describe, expect } from "vitest";
import { asJson, type Db } from "../db/client";
import { AppError, type AppErrorCode } from "../errors";
import { asSessionId, newSessionId, type SessionId } from "../ids";
import { workspaceLimits, type WorkspaceLimits } from "../../shared/limits";
import { SCRIPTED_CHOICE } from "../models/choice";
import { appendEvents } from "../runtime/session-log";
import { forkTeam } from "../team/person-actions";
import { leadOf, type Membership } from "../members/membership";
import { createTask, updateTask } from "../team/task-board";
import { tableDigests } from "../testing/db-snapshot";
import { databaseTest } from "../testing/fixtures";
import { createTestPerson } from "../testing/people";
import { unzip } from "../testing/zip";
import { newTestSession } from "../testing/runtime-harness";
import {
  deleteFile,
  editFile,
  fileHistory,
  listFiles,
  listWorkspaceChanges,
  readFile,
  searchFiles,
  workspaceSummary,
  workspaceZip,
  writeFile,
  type Writer,
} from "./index";

// The workspace against real Postgres (SPEC.md §14): versions, compare-and-set, edits, limits,
// paths, write-scope warnings, tombstones, content stored once, search, forks and the zip.

const it = databaseTest({ poolSize: 12 });
let db: Db;
it.beforeAll(({ db: fileDb }) => {
  db = fileDb;
});

const LIMITS = workspaceLimits();

interface Team {
  teamId: SessionId;
  lead: Membership;
  alice: Membership;
  bob: Membership;
  as(m: Membership): Writer;
}

async function addMember(teamId: SessionId, name: string): Promise<Membership> {
  const id = newSessionId();
  await db.session.create({ data: { id, teamId, memberName: name, title: name, model: asJson(SCRIPTED_CHOICE) } });
  await db.teamMember.create({ data: { teamId, name, sessionId: id, description: name, context: "fresh", phase: "active" } });
  return { teamId, sessionId: id, name, isLead: false };
}

async function newTeam(): Promise<Team> {
  const teamId = await newTestSession(db, "workspace team");
  return {
    teamId,
    lead: leadOf(teamId),
    alice: await addMember(teamId, "alice"),
    bob: await addMember(teamId, "bob"),
    as: (member) => ({ kind: "member", member }),
  };
}

async function refusal(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error("expected a refusal");
}

async function expectCode(p: Promise<unknown>, code: AppErrorCode): Promise<AppError> {
  const e = await refusal(p);
  expect(e.code).toBe(code);
  return e;
}

/** A task in progress, owned by `m`, with write scopes. */
async function claimWithScopes(t: Team, m: Membership, scopes: string[]): Promise<string> {
  const task = await createTask(db, m, { subject: `work of ${m.name}`, description: "", writeScopes: scopes });
  await updateTask(db, m, { taskId: task.id, expectedRevision: task.revision, action: "claim" });
  return task.id;
}

describe("versions", () => {
  it("numbers every change of a path 1, 2, 3 … with its author, and orders all changes of the team", async () => {
    const t = await newTeam();
    const a = await writeFile(db, t.teamId, t.as(t.alice), { path: "notes/a.md", content: "one" }, LIMITS);
    const b = await writeFile(db, t.teamId, t.as(t.bob), { path: "./notes\\b.md", content: "uno" }, LIMITS);
    const a2 = await writeFile(db, t.teamId, t.as(t.bob), { path: "notes/a.md", content: "two" }, LIMITS);
    expect([a.version, b.version, a2.version]).toEqual([1, 1, 2]);
    expect([a.change, b.change, a2.change]).toEqual([1, 2, 3]);
    expect(b.path).toBe("notes/b.md");

    const history = await fileHistory(db, t.teamId, "notes/a.md");
    expect(history.map((v) => [v.version, v.author.name, v.deleted])).toEqual([
      [2, "bob", false],
      [1, "alice", false],
    ]);
    expect((await readFile(db, t.teamId, { path: "notes/a.md" })).content).toBe("two");
    expect((await readFile(db, t.teamId, { path: "notes/a.md", version: 1 })).content).toBe("one");
    expect((await fileHistory(db, t.teamId, "notes/a.md", { beforeVersion: 2 })).map((v) => v.version)).toEqual([1]);
    expect(await fileHistory(db, t.teamId, "notes/a.md", { beforeVersion: 1 })).toEqual([]);
    expect((await listWorkspaceChanges(db, t.teamId)).map((c) => `${c.path}@${c.version}`)).toEqual(["notes/a.md@1", "notes/b.md@1", "notes/a.md@2"]);
    expect((await listWorkspaceChanges(db, t.teamId, { beforeChange: 3, limit: 1 })).map((c) => c.change)).toEqual([2]);
    expect(await workspaceSummary(db, t.teamId)).toEqual({ files: 2, bytes: 6, lastChange: 3 });
  });

  it("stores equal content once and writes nothing for content equal to the current version", async () => {
    const t = await newTeam();
    await writeFile(db, t.teamId, t.as(t.alice), { path: "x/1.txt", content: "same text" }, LIMITS);
    await writeFile(db, t.teamId, t.as(t.alice), { path: "x/2.txt", content: "same text" }, LIMITS);
    const again = await writeFile(db, t.teamId, t.as(t.bob), { path: "x/1.txt", content: "same text" }, LIMITS);
    expect(again).toMatchObject({ version: 1, unchanged: true });
    expect(await fileHistory(db, t.teamId, "x/1.txt")).toHaveLength(1);
    const shas = await db.workspaceVersion.findMany({ where: { teamId: t.teamId }, select: { blobSha: true } });
    expect(new Set(shas.map((s) => s.blobSha)).size).toBe(1);
  });

  it("keeps a tombstone on delete; reading it is NOT_FOUND, writing again continues the numbers", async () => {
    const t = await newTeam();
    await writeFile(db, t.teamId, t.as(t.alice), { path: "a.txt", content: "v1" }, LIMITS);
    await expectCode(deleteFile(db, t.teamId, t.as(t.alice), { path: "a.txt", expectedVersion: 7 }, LIMITS), "WORKSPACE_STALE_VERSION");
    const del = await deleteFile(db, t.teamId, t.as(t.alice), { path: "a.txt", expectedVersion: 1 }, LIMITS);
    expect(del).toMatchObject({ version: 2, deleted: true });
    const gone = await expectCode(readFile(db, t.teamId, { path: "a.txt" }), "WORKSPACE_NOT_FOUND");
    expect(gone.message).toMatch(/deleted \(version 2\)/);
    await expectCode(deleteFile(db, t.teamId, t.as(t.alice), { path: "a.txt", expectedVersion: 2 }, LIMITS), "WORKSPACE_NOT_FOUND");
    await expectCode(editFile(db, t.teamId, t.as(t.alice), { path: "a.txt", oldText: "v", newText: "w" }, LIMITS), "WORKSPACE_NOT_FOUND");
    expect((await listFiles(db, t.teamId)).files).toEqual([]);
    expect(await workspaceSummary(db, t.teamId)).toMatchObject({ files: 0, bytes: 0 });

    const back = await writeFile(db, t.teamId, t.as(t.bob), { path: "a.txt", content: "v3", expectedVersion: 0 }, LIMITS);
    expect(back.version).toBe(3);
    expect((await fileHistory(db, t.teamId, "a.txt")).map((v) => v.deleted)).toEqual([false, true, false]);
    await expectCode(readFile(db, t.teamId, { path: "a.txt", version: 2 }), "WORKSPACE_NOT_FOUND");
  });
});

describe("compare-and-set", () => {
  it("writes only over the version the writer saw; 0 means no file", async () => {
    const t = await newTeam();
    await writeFile(db, t.teamId, t.as(t.alice), { path: "f", content: "a", expectedVersion: 0 }, LIMITS);
    const stale = await expectCode(writeFile(db, t.teamId, t.as(t.bob), { path: "f", content: "b", expectedVersion: 0 }, LIMITS), "WORKSPACE_STALE_VERSION");
    expect(stale.details).toMatchObject({ currentVersion: 1 });
    expect(stale.message).toMatch(/at version 1/);
    expect(await writeFile(db, t.teamId, t.as(t.bob), { path: "f", content: "b", expectedVersion: 1 }, LIMITS)).toMatchObject({ version: 2 });
    await expectCode(writeFile(db, t.teamId, t.as(t.bob), { path: "g", content: "b", expectedVersion: 3 }, LIMITS), "WORKSPACE_STALE_VERSION");
  });

  it("lets exactly one of eight concurrent writers of the same version win, with no gap in the numbers", async () => {
    const t = await newTeam();
    await writeFile(db, t.teamId, t.as(t.lead), { path: "race.txt", content: "start" }, LIMITS);
    const writers = [t.lead, t.alice, t.bob];
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        writeFile(db, t.teamId, t.as(writers[i % 3]!), { path: "race.txt", content: `writer ${i}`, expectedVersion: 1 }, LIMITS),
      ),
    );
    const won = results.filter((r) => r.status === "fulfilled");
    expect(won).toHaveLength(1);
    for (const r of results) if (r.status === "rejected") expect((r.reason as AppError).code).toBe("WORKSPACE_STALE_VERSION");
    expect((await fileHistory(db, t.teamId, "race.txt")).map((v) => v.version)).toEqual([2, 1]);
    // Unconditional writes of different paths all land, their change numbers contiguous.
    await Promise.all(Array.from({ length: 8 }, (_, i) => writeFile(db, t.teamId, t.as(t.alice), { path: `many/${i}`, content: `${i}` }, LIMITS)));
    expect((await listWorkspaceChanges(db, t.teamId)).map((c) => c.change)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });
});

describe("edits", () => {
  it("replaces text that occurs exactly once, or every occurrence with replace_all", async () => {
    const t = await newTeam();
    await writeFile(db, t.teamId, t.as(t.alice), { path: "e.md", content: "alpha beta alpha gamma" }, LIMITS);
    const notUnique = await expectCode(editFile(db, t.teamId, t.as(t.bob), { path: "e.md", oldText: "alpha", newText: "A" }, LIMITS), "WORKSPACE_EDIT_NOT_UNIQUE");
    expect(notUnique.message).toMatch(/2 times/);
    await expectCode(editFile(db, t.teamId, t.as(t.bob), { path: "e.md", oldText: "delta", newText: "D" }, LIMITS), "WORKSPACE_EDIT_NOT_FOUND");
    expect(await editFile(db, t.teamId, t.as(t.bob), { path: "e.md", oldText: "beta", newText: "B" }, LIMITS)).toMatchObject({ version: 2, replacements: 1 });
    expect(await editFile(db, t.teamId, t.as(t.bob), { path: "e.md", oldText: "alpha", newText: "A", replaceAll: true }, LIMITS)).toMatchObject({
      version: 3,
      replacements: 2,
    });
    expect((await readFile(db, t.teamId, { path: "e.md" })).content).toBe("A B A gamma");
    // `$&` and friends are plain text here, not replacement patterns.
    await editFile(db, t.teamId, t.as(t.bob), { path: "e.md", oldText: "gamma", newText: "$& $1" }, LIMITS);
    expect((await readFile(db, t.teamId, { path: "e.md" })).content).toBe("A B A $& $1");
  });
});

describe("limits and paths", () => {
  const small: WorkspaceLimits = { maxFileBytes: 10, maxFiles: 2, maxBytes: 15 };

  it("refuses a file over the size limit, a third file and bytes over the total, persisting nothing", async () => {
    const t = await newTeam();
    await writeFile(db, t.teamId, t.as(t.alice), { path: "a", content: "12345678" }, small);
    const before = await tableDigests(db);
    await expectCode(writeFile(db, t.teamId, t.as(t.alice), { path: "big", content: "é".repeat(6) }, small), "WORKSPACE_FILE_TOO_LARGE");
    await expectCode(writeFile(db, t.teamId, t.as(t.alice), { path: "b", content: "12345678" }, small), "WORKSPACE_FULL");
    await writeFile(db, t.teamId, t.as(t.alice), { path: "b", content: "1234567" }, small);
    const before2 = await tableDigests(db);
    await expectCode(writeFile(db, t.teamId, t.as(t.alice), { path: "c", content: "" }, small), "WORKSPACE_FULL");
    expect(await tableDigests(db)).toEqual(before2);
    // Shrinking and replacing stay possible at the limits; a deletion frees a slot.
    await writeFile(db, t.teamId, t.as(t.alice), { path: "a", content: "1" }, small);
    await deleteFile(db, t.teamId, t.as(t.alice), { path: "b", expectedVersion: 1 }, small);
    await writeFile(db, t.teamId, t.as(t.alice), { path: "c", content: "123456789" }, small);
    expect(await workspaceSummary(db, t.teamId)).toMatchObject({ files: 2, bytes: 10 });
    expect(before).not.toEqual(before2);
  });

  it("refuses an edit that would grow past the file limit before building it, and lets an oversized file shrink", async () => {
    const t = await newTeam();
    await writeFile(db, t.teamId, t.as(t.alice), { path: "a.txt", content: `${"a".repeat(200_000)}END` }, LIMITS);
    const started = process.memoryUsage().heapUsed;
    await expectCode(editFile(db, t.teamId, t.as(t.alice), { path: "a.txt", oldText: "a", newText: "b".repeat(2000), replaceAll: true }, LIMITS), "WORKSPACE_FILE_TOO_LARGE");
    expect(process.memoryUsage().heapUsed - started).toBeLessThan(100 * 1024 * 1024);
    // The limit is lowered under an existing file: it can still be made smaller, never larger.
    const lower: WorkspaceLimits = { ...LIMITS, maxFileBytes: 1000 };
    await expectCode(editFile(db, t.teamId, t.as(t.alice), { path: "a.txt", oldText: "END", newText: "END!" }, lower), "WORKSPACE_FILE_TOO_LARGE");
    expect(await editFile(db, t.teamId, t.as(t.alice), { path: "a.txt", oldText: "aEND", newText: "" }, lower)).toMatchObject({ version: 2, bytes: 199_999 });
  });

  it("names one file for either Unicode form of a name, and refuses invisible or bidi characters", async () => {
    const t = await newTeam();
    await writeFile(db, t.teamId, t.as(t.alice), { path: "caf\u00e9.md", content: "nfc" }, LIMITS);
    expect((await readFile(db, t.teamId, { path: "cafe\u0301.md" })).content).toBe("nfc");
    for (const path of ["evil\u202egpj.exe", "zero\u200bwidth", "b\ufeffom", "c1\u0085x"]) {
      await expectCode(writeFile(db, t.teamId, t.as(t.alice), { path, content: "x" }, LIMITS), "WORKSPACE_PATH_INVALID");
    }
  });

  it.each([["../x"], ["/etc/passwd"], ["C:\\x"], ["a//b"], ["dir/"], ["."], [""], ["~/x"], ["a/\u0007"]])("refuses the path %j", async (path) => {
    const t = await newTeam();
    const before = await tableDigests(db);
    await expectCode(writeFile(db, t.teamId, t.as(t.alice), { path, content: "x" }, LIMITS), "WORKSPACE_PATH_INVALID");
    expect(await tableDigests(db)).toEqual(before);
  });

  it("never lets a file and a directory share a name, and is case-sensitive", async () => {
    const t = await newTeam();
    await writeFile(db, t.teamId, t.as(t.alice), { path: "src/app", content: "file" }, LIMITS);
    expect((await expectCode(writeFile(db, t.teamId, t.as(t.alice), { path: "src/app/x.ts", content: "" }, LIMITS), "WORKSPACE_PATH_INVALID")).message).toMatch(
      /src\/app is a file/,
    );
    expect((await expectCode(writeFile(db, t.teamId, t.as(t.alice), { path: "src", content: "" }, LIMITS), "WORKSPACE_PATH_INVALID")).message).toMatch(/it is a directory/);
    await writeFile(db, t.teamId, t.as(t.alice), { path: "SRC", content: "other" }, LIMITS);
    await writeFile(db, t.teamId, t.as(t.alice), { path: "src/app0", content: "sibling" }, LIMITS);
    // Once the file is gone, its name can become a directory.
    await deleteFile(db, t.teamId, t.as(t.alice), { path: "src/app", expectedVersion: 1 }, LIMITS);
    await writeFile(db, t.teamId, t.as(t.alice), { path: "src/app/x.ts", content: "" }, LIMITS);
    expect((await listFiles(db, t.teamId)).files.map((f) => f.path)).toEqual(["SRC", "src/app/x.ts", "src/app0"]);
  });
});

describe("write scopes meet files", () => {
  it("warns outside the writer's in-progress scopes and inside another member's, and records the writer's tasks", async () => {
    const t = await newTeam();
    const none = await writeFile(db, t.teamId, t.as(t.alice), { path: "notes/n.md", content: "x" }, LIMITS);
    expect(none.warnings).toEqual([expect.stringMatching(/no in-progress task with write_scopes/)]);

    const aliceTask = await claimWithScopes(t, t.alice, ["notes"]);
    const bobTask = await claimWithScopes(t, t.bob, ["src"]);
    const inside = await writeFile(db, t.teamId, t.as(t.alice), { path: "notes/deep/n.md", content: "x" }, LIMITS);
    expect(inside.warnings).toEqual([]);
    const theirs = await writeFile(db, t.teamId, t.as(t.alice), { path: "src/main.ts", content: "x" }, LIMITS);
    expect(theirs.warnings).toEqual([
      expect.stringMatching(/outside the write scopes of your in-progress tasks \(notes\)/),
      expect.stringMatching(new RegExp(`inside write scope src of ${bobTask}, in progress by bob`)),
    ]);
    const [v] = await fileHistory(db, t.teamId, "src/main.ts");
    expect(v).toMatchObject({ taskIds: [aliceTask], warnings: theirs.warnings });
    // `notesx` is not under `notes`.
    expect((await writeFile(db, t.teamId, t.as(t.alice), { path: "notesx", content: "x" }, LIMITS)).warnings).toHaveLength(1);

    // A person has no tasks: only another member's scope warns.
    const person = await createTestPerson(db, "Pat");
    const byPerson: Writer = { kind: "person", actor: { person, teamId: t.teamId } };
    await db.teamPerson.create({ data: { teamId: t.teamId, userId: person.id, role: "member" } });
    expect((await writeFile(db, t.teamId, byPerson, { path: "README.md", content: "hi" }, LIMITS)).warnings).toEqual([]);
    const w = await writeFile(db, t.teamId, byPerson, { path: "notes/p.md", content: "hi" }, LIMITS);
    expect(w.warnings).toEqual([expect.stringMatching(new RegExp(`inside write scope notes of ${aliceTask}, in progress by alice`))]);
    const [pv] = await fileHistory(db, t.teamId, "notes/p.md");
    expect(pv!.author).toEqual({ kind: "person", id: person.id, name: "Pat" });
  });

  it("records a person's change in the action log, and rolls it back whole for a viewer", async () => {
    const t = await newTeam();
    const viewer = await createTestPerson(db, "Vi");
    await db.teamPerson.create({ data: { teamId: t.teamId, userId: viewer.id, role: "viewer" } });
    const before = await tableDigests(db);
    await expectCode(writeFile(db, t.teamId, { kind: "person", actor: { person: viewer, teamId: t.teamId } }, { path: "x", content: "x" }, LIMITS), "FORBIDDEN");
    expect(await tableDigests(db)).toEqual(before);

    const member = await createTestPerson(db, "Mo");
    await db.teamPerson.create({ data: { teamId: t.teamId, userId: member.id, role: "member" } });
    await writeFile(db, t.teamId, { kind: "person", actor: { person: member, teamId: t.teamId } }, { path: "x", content: "x" }, LIMITS);
    const actions = await db.personAction.findMany({ where: { teamId: t.teamId, action: "file_changed" } });
    expect(actions.map((a) => [a.userName, a.detail])).toEqual([["Mo", { path: "x", version: 1, deleted: false }]]);
  });
});

describe("reads", () => {
  it("lists by prefix in byte order with paging", async () => {
    const t = await newTeam();
    for (const p of ["b/2", "a", "b/1", "b/10", "bb", "B"]) await writeFile(db, t.teamId, t.as(t.alice), { path: p, content: p }, LIMITS);
    expect((await listFiles(db, t.teamId)).files.map((f) => f.path)).toEqual(["B", "a", "b/1", "b/10", "b/2", "bb"]);
    expect((await listFiles(db, t.teamId, { prefix: "./b/" })).files.map((f) => f.path)).toEqual(["b/1", "b/10", "b/2"]);
    const page1 = await listFiles(db, t.teamId, { limit: 4 });
    const page2 = await listFiles(db, t.teamId, { limit: 4, cursor: page1.nextCursor });
    expect([...page1.files, ...page2.files].map((f) => f.path)).toEqual(["B", "a", "b/1", "b/10", "b/2", "bb"]);
    expect(page2.nextCursor).toBeUndefined();
    expect(page1.files[0]).toMatchObject({ version: 1, bytes: 1, author: { kind: "member", name: "alice" } });
    await expectCode(listFiles(db, t.teamId, { prefix: "../" }), "WORKSPACE_PATH_INVALID");
  });

  it("reads line ranges, and stops a long read at whole lines", async () => {
    const t = await newTeam();
    await writeFile(db, t.teamId, t.as(t.alice), { path: "l.txt", content: "one\ntwo\nthree\nfour" }, LIMITS);
    expect(await readFile(db, t.teamId, { path: "l.txt", startLine: 2, endLine: 3 })).toMatchObject({
      content: "two\nthree",
      startLine: 2,
      endLine: 3,
      totalLines: 4,
      truncated: false,
    });
    expect(await readFile(db, t.teamId, { path: "l.txt", startLine: 9 })).toMatchObject({ content: "", totalLines: 4 });
    const long = Array.from({ length: 80_000 }, (_, i) => `line ${i}`).join("\n");
    await writeFile(db, t.teamId, t.as(t.alice), { path: "long.txt", content: long }, LIMITS);
    const max = 256 * 1024;
    const head = await readFile(db, t.teamId, { path: "long.txt", maxBytes: max });
    expect(head.truncated).toBe(true);
    expect(Buffer.byteLength(head.content)).toBeLessThanOrEqual(max);
    expect(head.content.split("\n")).toHaveLength(head.endLine);
    expect(head.content.endsWith(`line ${head.endLine - 1}`)).toBe(true);
    // Reading on is bounded too, whatever range is asked for; the last page is not truncated.
    const next = await readFile(db, t.teamId, { path: "long.txt", startLine: head.endLine + 1, endLine: 2_000_000_000, maxBytes: max });
    expect(next).toMatchObject({ startLine: head.endLine + 1, truncated: true });
    expect(Buffer.byteLength(next.content)).toBeLessThanOrEqual(max);
    let page = next;
    while (page.truncated) page = await readFile(db, t.teamId, { path: "long.txt", startLine: page.endLine + 1, maxBytes: max });
    expect(page).toMatchObject({ endLine: 80_000, totalLines: 80_000, truncated: false });
    // Without a limit (the Files view, downloads) the whole file.
    expect((await readFile(db, t.teamId, { path: "long.txt" })).content).toBe(long);
    // One line longer than the limit is cut, and says so.
    await writeFile(db, t.teamId, t.as(t.alice), { path: "one-line.txt", content: "x".repeat(max + 10) }, LIMITS);
    expect(await readFile(db, t.teamId, { path: "one-line.txt", maxBytes: max })).toMatchObject({ content: "x".repeat(max), truncated: true, endLine: 1 });
  });

  it("searches literal text and regular expressions, by prefix, capped, and refuses a bad pattern", async () => {
    const t = await newTeam();
    await writeFile(db, t.teamId, t.as(t.alice), { path: "src/a.ts", content: "const a = 1;\n// TODO fix\nconst b = a + 1;" }, LIMITS);
    await writeFile(db, t.teamId, t.as(t.alice), { path: "docs/todo.md", content: "todo: write docs\n(a+1)" }, LIMITS);
    await writeFile(db, t.teamId, t.as(t.alice), { path: "gone.ts", content: "TODO" }, LIMITS);
    await deleteFile(db, t.teamId, t.as(t.alice), { path: "gone.ts", expectedVersion: 1 }, LIMITS);
    expect((await searchFiles(db, t.teamId, { query: "TODO" })).matches).toEqual([{ path: "src/a.ts", line: 2, text: "// TODO fix" }]);
    expect((await searchFiles(db, t.teamId, { query: "todo", ignoreCase: true })).matches.map((m) => m.path)).toEqual(["docs/todo.md", "src/a.ts"]);
    expect((await searchFiles(db, t.teamId, { query: "(a+1)" })).matches).toEqual([{ path: "docs/todo.md", line: 2, text: "(a+1)" }]);
    expect((await searchFiles(db, t.teamId, { query: "^const [ab]", regex: true })).matches.map((m) => m.line)).toEqual([1, 3]);
    expect((await searchFiles(db, t.teamId, { query: "const", prefix: "docs" })).matches).toEqual([]);
    expect(await searchFiles(db, t.teamId, { query: "a", limit: 2 })).toMatchObject({ truncated: true, matches: [{}, {}] });
    await expectCode(searchFiles(db, t.teamId, { query: "(unclosed", regex: true }), "WORKSPACE_INVALID_PATTERN");
  });
});

describe("forks", () => {
  it("copies the workspace as it was at the fork point; later changes stay in the source", async () => {
    const t = await newTeam();
    const turn = async (n: number) =>
      appendEvents(db, t.teamId, [{ kind: "turn_start", turnId: `t${n}` }, { kind: "turn_end", turnId: `t${n}`, reason: "completed" }], null);
    await writeFile(db, t.teamId, t.as(t.alice), { path: "kept.md", content: "v1" }, LIMITS);
    await writeFile(db, t.teamId, t.as(t.bob), { path: "gone.md", content: "bye" }, LIMITS);
    await deleteFile(db, t.teamId, t.as(t.bob), { path: "gone.md", expectedVersion: 1 }, LIMITS);
    const [, end1] = await turn(1);
    await new Promise((r) => setTimeout(r, 5)); // a later millisecond on the log's clock
    await writeFile(db, t.teamId, t.as(t.alice), { path: "kept.md", content: "v2 after the fork point" }, LIMITS);
    await writeFile(db, t.teamId, t.as(t.alice), { path: "later.md", content: "later" }, LIMITS);
    await turn(2);

    const fork = await forkTeam(db, t.teamId, { throughSeq: end1!.seq });
    const forkId = asSessionId(fork.id);
    expect((await listFiles(db, forkId)).files.map((f) => [f.path, f.version])).toEqual([["kept.md", 1]]);
    expect((await readFile(db, forkId, { path: "kept.md" })).content).toBe("v1");
    expect((await fileHistory(db, forkId, "gone.md")).map((v) => v.deleted)).toEqual([true, false]);
    expect(await workspaceSummary(db, forkId)).toEqual({ files: 1, bytes: 2, lastChange: 3 });
    // The fork's workspace goes on on its own: numbers continue, the source is untouched.
    await writeFile(db, forkId, { kind: "member", member: leadOf(forkId) }, { path: "kept.md", content: "fork's own" }, LIMITS);
    expect((await readFile(db, forkId, { path: "kept.md" })).version).toBe(2);
    expect((await readFile(db, t.teamId, { path: "kept.md" })).content).toBe("v2 after the fork point");
    // A fork of everything copies everything.
    const all = await forkTeam(db, t.teamId, {});
    expect((await listFiles(db, asSessionId(all.id))).files.map((f) => f.path)).toEqual(["kept.md", "later.md"]);
  });
});

describe("zip", () => {
  it("streams every live file, in path order, with its content", async () => {
    const t = await newTeam();
    const files: Record<string, string> = { "a.md": "# A\n", "src/x.ts": "export const x = 'é';\n", "empty.txt": "" };
    for (let i = 0; i < 150; i++) files[`many/${String(i).padStart(3, "0")}.txt`] = `file ${i}\n`;
    for (const [path, content] of Object.entries(files)) await writeFile(db, t.teamId, t.as(t.alice), { path, content }, LIMITS);
    await writeFile(db, t.teamId, t.as(t.alice), { path: "deleted.txt", content: "x" }, LIMITS);
    await deleteFile(db, t.teamId, t.as(t.alice), { path: "deleted.txt", expectedVersion: 1 }, LIMITS);

    const { stream, files: count } = await workspaceZip(db, t.teamId);
    expect(count).toBe(Object.keys(files).length);
    const entries = await unzip(Buffer.concat(await stream.toArray()));
    expect(entries.map(([p]) => p)).toEqual(Object.keys(files).sort());
    expect(Object.fromEntries(entries)).toEqual(files);
  });
});
