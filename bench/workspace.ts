// The team workspace against a real Postgres, next to the raw commit rate of the same server
// measured in the same run, and a file change's way to the Files view in a real browser.
// Figures only, no assertions.
//
//   npm run bench:workspace        (TEST_DATABASE_URL, default postgresql://postgres@127.0.0.1:5432/postgres)
//
// Creates its own database (migrated with the project's runner), drops it at the end, and
// prints ONE JSON object on stdout; progress goes to stderr. Knobs: BENCH_OPS_MS (each
// throughput scenario, default 3000), BENCH_COMMIT_MS (default 2000), BENCH_LIST_FILES
// (default 10000), BENCH_ZIP_MIB (default 64), BENCH_LATENCY_SAMPLES (default 30).
//
// - pgCommitRate: single-row INSERT autocommits with plain `pg`, 1 connection.
// - writes / edits: 1 and 8 concurrent agents (teammates of one team, each with an in-progress
//   task scoped to its own directory) on ONE workspace, each in a loop for BENCH_OPS_MS:
//   `writes` replaces a 1 KiB file of its own (writeFile, the tool's domain function, in its own
//   transaction as ctx.commit runs it); `edits` changes one line of its own 4 KiB file
//   (editFile). Changes of one workspace are serialised by its counters row, so 8 agents share
//   one lock: opsPerSec over all agents, the p50/p99 of one change, and the ratio to the commit
//   rate.
// - list: a workspace of BENCH_LIST_FILES files in 100 directories; the time to read the whole
//   listing the way the Files view does (workspace.list pages of 1000) and one page of 200 (the
//   tool's default), median of 5.
// - zip: a workspace of BENCH_ZIP_MIB MiB (64 files of 1 MiB of random hex, the default file
//   limit, plus small ones), streamed by workspaceZip into a byte counter: MB/s and the archive size; peak RSS
//   growth during the stream.
// - fileChangeToFeed: the time from a file change's commit (writeFile resolved) to the
//   workspace feed's message of that change (the path a browser's Files view follows: NOTIFY →
//   a read of the changes since the feed's cursor), in-process through createCaller; p50/p95.
// - fileChangeToScreen: the same path to a person's screen, in Chromium against the production
//   build (scripts/e2e-server.ts on this database; one `next build` first if .next/BUILD_ID is
//   missing). The owner creates a team and opens its Files view (`?view=files`); a second person
//   (a viewer by invite, `secondPerson`) watches the same Files view in a browser context of
//   their own at the same time. BENCH_LATENCY_SAMPLES new files `lat/LATMARK-<i>-<hex>.md` are
//   written in-process (writeFile, as the Lead) 80–150 ms apart; the bench stamps Date.now()
//   when the commit resolves, a MutationObserver in each page stamps timeOrigin + now() when
//   the file's name is first in the File tree. p50/p95/max per person (bench/browser.ts).
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { chromium, type Browser, type BrowserContext, type Page } from "@playwright/test";
import { OPEN_ALL_UP_TO } from "../components/files/tree-model";
import { chromiumLaunchOptions } from "../e2e/chromium";
import { createDb, type DatabaseUrls, type Db, directUrlOf } from "../server/db/client";
import { parseEnv } from "../server/env";
import { asSessionId, newSessionId, type SessionId } from "../server/ids";
import { workspaceLimits } from "../shared/limits";
import { ActivityHub } from "../server/live/activity";
import { SCRIPTED_CHOICE } from "../server/models/choice";
import { createSession } from "../server/runtime/sessions";
import { createTeam } from "../server/team/person-actions";
import type { Membership } from "../server/members/membership";
import { leadOf } from "../server/members/membership";
import { createTask, updateTask } from "../server/team/task-board";
import { freePort } from "../server/testing/net";
import { createTestPerson, signUpOverHttp } from "../server/testing/people";
import { inertRuntime } from "../server/testing/runtime-harness";
import { createCaller } from "../server/trpc/root";
import { editFile, listFiles, workspaceZip, writeFile, type Writer } from "../server/workspace";
import { ensureNextBuild, installProbe, inviteWatcher, markerLatency, mutate, signedInContext, startServer, stopServer } from "./browser";
import { commitRate, percentile, progress, round, runBench, serverInfo, withBenchDatabase } from "./support";

const OPS_MS = Number(process.env.BENCH_OPS_MS ?? 3000);
const COMMIT_MS = Number(process.env.BENCH_COMMIT_MS ?? 2000);
const LIST_FILES = Number(process.env.BENCH_LIST_FILES ?? 10_000);
const ZIP_MIB = Number(process.env.BENCH_ZIP_MIB ?? 64);
const LATENCY_SAMPLES = Number(process.env.BENCH_LATENCY_SAMPLES ?? 30);
/** createDb's default (the app server's is DATABASE_POOL_SIZE, 20): kept, so figures compare across runs. */
const DB_POOL = 10;
const LIMITS = workspaceLimits({ maxFiles: Math.max(10_000, LIST_FILES + 100), maxBytes: (ZIP_MIB + 16) * 1024 * 1024 });

async function newTeam(db: Db, agents: number): Promise<{ teamId: SessionId; members: Membership[] }> {
  const lead = await createSession(db, { title: "bench workspace", model: SCRIPTED_CHOICE });
  const teamId = asSessionId(lead.id);
  const members: Membership[] = [];
  for (let i = 0; i < agents; i++) {
    const id = newSessionId();
    const name = `agent-${i}`;
    await db.session.create({ data: { id, teamId, memberName: name, title: name, model: SCRIPTED_CHOICE } });
    await db.teamMember.create({ data: { teamId, name, sessionId: id, description: name, context: "fresh", phase: "active" } });
    const m: Membership = { teamId, sessionId: id, name, isLead: false };
    const task = await createTask(db, m, { subject: `work of ${name}`, description: "", writeScopes: [`agents/${name}`] });
    await updateTask(db, m, { taskId: task.id, expectedRevision: task.revision, action: "claim" });
    members.push(m);
  }
  return { teamId, members };
}

const as = (member: Membership): Writer => ({ kind: "member", member });

async function throughput(db: Db, agents: number, kind: "writes" | "edits", commits: number) {
  const { teamId, members } = await newTeam(db, agents);
  const line = (i: number, n: number) => `line ${i}: ${"x".repeat(40)} ${n}`;
  for (const m of members) {
    const content = Array.from({ length: 80 }, (_, i) => line(i, 0)).join("\n");
    await writeFile(db, teamId, as(m), { path: `agents/${m.name}/file.txt`, content }, LIMITS);
  }
  const times: number[] = [];
  const deadline = performance.now() + OPS_MS;
  const started = performance.now();
  await Promise.all(
    members.map(async (m) => {
      const path = `agents/${m.name}/file.txt`;
      for (let n = 1; performance.now() < deadline; n++) {
        const t0 = performance.now();
        if (kind === "writes") await writeFile(db, teamId, as(m), { path, content: `${"y".repeat(1000)} ${n}` }, LIMITS);
        else await editFile(db, teamId, as(m), { path, oldText: line(40, n - 1), newText: line(40, n) }, LIMITS);
        times.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  const opsPerSec = times.length / elapsed;
  return { agents, ops: times.length, opsPerSec: round(opsPerSec), p50Ms: round(percentile(times, 50), 2), p99Ms: round(percentile(times, 99), 2), ratioToCommitRate: round(opsPerSec / commits, 3) };
}

async function listing(db: Db) {
  const { teamId } = await newTeam(db, 0);
  const lead = leadOf(teamId);
  progress(`filling a workspace with ${LIST_FILES} files`);
  for (let i = 0; i < LIST_FILES; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, LIST_FILES - i) }, (_, k) =>
        writeFile(db, teamId, as(lead), { path: `dir-${(i + k) % 100}/file-${i + k}.txt`, content: `content of ${i + k}` }, LIMITS),
      ),
    );
  }
  const whole: number[] = [];
  const page: number[] = [];
  for (let run = 0; run < 5; run++) {
    let t0 = performance.now();
    let cursor: string | undefined;
    let n = 0;
    do {
      const p = await listFiles(db, teamId, { cursor, limit: 1000 });
      n += p.files.length;
      cursor = p.nextCursor;
    } while (cursor);
    whole.push(performance.now() - t0);
    if (n !== LIST_FILES) throw new Error(`listed ${n} files, expected ${LIST_FILES}`);
    t0 = performance.now();
    await listFiles(db, teamId, { limit: 200 });
    page.push(performance.now() - t0);
  }
  whole.sort((a, b) => a - b);
  page.sort((a, b) => a - b);
  return { files: LIST_FILES, wholeListingMs: round(percentile(whole, 50)), firstPageOf200Ms: round(percentile(page, 50), 2) };
}

async function zip(db: Db) {
  const { teamId } = await newTeam(db, 0);
  const lead = leadOf(teamId);
  progress(`filling a workspace with ${ZIP_MIB} MiB`);
  // 1 MiB of random hex text: compresses like real text (about half), unlike a repeated pattern.
  const mib = randomBytes(512 * 1024).toString("hex");
  for (let i = 0; i < ZIP_MIB; i++) await writeFile(db, teamId, as(lead), { path: `big/file-${i}.txt`, content: `${i}\n${mib.slice(0, mib.length - 2 - String(i).length)}\n` }, LIMITS);
  for (let i = 0; i < 200; i++) await writeFile(db, teamId, as(lead), { path: `small/file-${i}.md`, content: `# small ${i}\n` }, LIMITS);
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  let bytes = 0;
  const t0 = performance.now();
  const { stream, files } = await workspaceZip(db, teamId);
  await pipeline(
    stream,
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        bytes += chunk.length;
        cb();
      },
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(timer);
  const inputMiB = ZIP_MIB + (200 * 12) / (1024 * 1024);
  return { files, inputMiB: round(inputMiB, 2), archiveMiB: round(bytes / 1024 / 1024, 2), seconds: round(seconds, 2), mbPerSec: round((inputMiB * 1.048576) / seconds, 1), peakRssGrowthMiB: round((peak - rss0) / 1024 / 1024, 1) };
}

async function fileChangeToFeed(database: DatabaseUrls, db: Db) {
  const hub = new ActivityHub(database);
  await hub.start();
  const runtime = await inertRuntime(db, hub);
  const person = await createTestPerson(db, "Bench Watcher");
  const lead = await createTeam(db, { title: "bench feed", model: SCRIPTED_CHOICE, by: person });
  const teamId = asSessionId(lead.id);
  const abort = new AbortController();
  const caller = createCaller({ db, env: parseEnv({}), hub, runtime, person }, { signal: abort.signal });
  const feed = (await caller.workspace.live({ teamId, lastEventId: null }))[Symbol.asyncIterator]();
  await feed.next();
  const samples: number[] = [];
  try {
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      const done = await writeFile(db, teamId, as(leadOf(teamId)), { path: `latency/${i}.md`, content: `sample ${i}` }, LIMITS);
      const t0 = performance.now();
      for (;;) {
        const next = await feed.next();
        const message = (next.value as [string, { lastChange: number }] | undefined)?.[1];
        if (next.done || (message && message.lastChange >= done.change)) break;
      }
      samples.push(performance.now() - t0);
    }
  } finally {
    abort.abort();
    await feed.return?.();
    await hub.close();
  }
  samples.sort((a, b) => a - b);
  return { samples: samples.length, p50Ms: round(percentile(samples, 50), 2), p95Ms: round(percentile(samples, 95), 2) };
}

/** The Files view's tree, as CSS for the in-page observer and as Playwright finds it. */
const FILE_TREE = 'nav[aria-label="File tree"]';
const fileTree = (page: Page) => page.getByRole("navigation", { name: "File tree" });

/** Opens a team's Files view in a fresh page with the probe, once its File tree is there. */
async function filesPage(context: BrowserContext, url: string): Promise<Page> {
  const page = await context.newPage();
  await page.addInitScript(installProbe, null);
  await page.goto(url);
  await fileTree(page).waitFor({ timeout: 60_000 });
  return page;
}

async function fileChangeToScreen(url: string, db: Db) {
  let server: ChildProcess | null = null;
  let browser: Browser | null = null;
  try {
    const port = await freePort();
    progress(`starting the app server on port ${port}`);
    const s = await startServer(url, port);
    server = s.child;
    // The instance's first account (the earlier phases made no account that owns it).
    const owner = await signUpOverHttp(s.baseUrl, { name: "Bench Owner" });
    const team = await mutate<{ id: string }>(s.baseUrl, owner, "session.create", { title: "Bench: files on screen" });
    const teamId = asSessionId(team.id);
    const watcher = await inviteWatcher(s.baseUrl, owner, teamId);

    browser = await chromium.launch(chromiumLaunchOptions);
    const filesUrl = `${s.baseUrl}/teams/${teamId}?view=files`;
    const pages: Page[] = [];
    for (const person of [owner, watcher]) pages.push(await filesPage(await signedInContext(browser, person, s.baseUrl), filesUrl));
    // One change both trees show first: the live path (feed, listing) is warm before measuring.
    await writeFile(db, teamId, as(leadOf(teamId)), { path: "warm-up.md", content: "warm\n" }, LIMITS);
    for (const page of pages) await fileTree(page).getByRole("link", { name: "warm-up.md" }).waitFor({ timeout: 60_000 });

    progress(`file change → screen (${LATENCY_SAMPLES} samples, owner and a second person)`);
    const [ownerLatency, secondPerson] = await markerLatency(pages, LATENCY_SAMPLES, FILE_TREE, (i, marker) =>
      writeFile(db, teamId, as(leadOf(teamId)), { path: `lat/${marker}.md`, content: `# sample ${i}\n` }, LIMITS),
    );
    return { chromium: browser.version(), ...ownerLatency, secondPerson };
  } finally {
    await browser?.close().catch(() => undefined);
    if (server) await stopServer(server).catch(() => undefined);
  }
}

async function main(): Promise<void> {
  // Up to this many files a new Files view opens every folder (components/files/tree-model.ts);
  // past it, the markers' folder would start closed and nothing would be seen.
  if (LATENCY_SAMPLES + 1 > OPEN_ALL_UP_TO) throw new Error(`BENCH_LATENCY_SAMPLES must be at most ${OPEN_ALL_UP_TO - 1}`);
  // Before any figure, so a failing build costs none.
  ensureNextBuild(progress);
  await withBenchDatabase("bench_workspace", async (database) => {
    const url = directUrlOf(database);
    const db = createDb(database, DB_POOL);
    try {
      progress("commit rate");
      const commits = await commitRate(url, 1, COMMIT_MS);
      const results: Record<string, unknown> = { server: await serverInfo(url), pgCommitRate: { connections: 1, commitsPerSec: round(commits) } };
      for (const kind of ["writes", "edits"] as const) {
        const rows = [];
        for (const agents of [1, 8]) {
          progress(`${kind}: ${agents} agent(s) on one workspace`);
          rows.push(await throughput(db, agents, kind, commits));
        }
        results[kind] = rows;
      }
      progress("listing");
      results.list = await listing(db);
      progress("zip");
      results.zip = await zip(db);
      progress("file change → team feed");
      results.fileChangeToFeed = await fileChangeToFeed(database, db);
      progress("file change → screen (browser)");
      results.fileChangeToScreen = await fileChangeToScreen(url, db);
      process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
    } finally {
      await db.$disconnect();
    }
  });
}

runBench(main);
