// Browser-side figures for the team room, against the production build served by
// scripts/e2e-server.ts and a real Postgres. Figures only, no assertions.
//
//   npm run bench:ui          (TEST_DATABASE_URL, default postgresql://postgres@127.0.0.1:5432/postgres)
//
// Creates and migrates its own database, seeds it directly through appendEvents (no lease),
// starts the app server on it (E2E_SKIP_BUILD=1; one `next build` first if .next/BUILD_ID is
// missing), drives Chromium with the launch options of playwright.config.ts, and prints ONE
// JSON object on stdout; progress goes to stderr. Browser, server and database are cleaned up
// also on errors. The server, people, in-page probe and marker latency are bench/browser.ts's.
//
// - teamRoomLoad: one Lead per size in BENCH_ROOM_EVENTS (20000,2000), each seeded with that
//   many events (turns of turn_start, step_start, user_message, assistant_message, step_end,
//   turn_end); ms from navigation start (the page's performance.now() origin) until a
//   MutationObserver sees the last reply's unique text (`seenMs`), and until the room is usable
//   (`usableMs`: that reply and an enabled Prompt box in the DOM, and the page's next task has
//   run, so no long task still holds the main thread); the reply is then also waited for as
//   visible. Median of BENCH_LOADS (3) fresh pages per size. The goal: 20,000 events usable in
//   under 1 s.
// - streaming: BENCH_CHUNKS (20,000) assistant_delta events of a few words each, one event per
//   chunk, committed in transactions of 100, after a turn_start and step_start; an
//   assistant_message with the whole text, step_end and turn_end at the end. Meanwhile a key is
//   typed into the Prompt textbox every 100 ms. Reported: longest `longtask` entry, keydown input
//   delay (performance.now() - event.timeStamp in a keydown listener; max and p95), the Event
//   Timing API's worst keydown (processingStart - startTime, entries >= 16 ms only), and how
//   long after the last commit the final reply was on screen.
// - eventToScreen: BENCH_LATENCY_SAMPLES (50) user_message events committed one at a time; the
//   bench stamps Date.now() when the commit resolves, a MutationObserver in the page stamps
//   performance.timeOrigin + performance.now() when the text is first in the DOM. Measured in
//   two browsers at once: the owner's, and a second person's (a viewer by invite) watching the
//   same team (`secondPerson`), as the same figure.
// - phoneFirstScreen: at 390×844, BENCH_LOADS fresh pages of the 2,000-event room (the smaller
//   of BENCH_ROOM_EVENTS): ms from navigation start until a skeleton block is in the DOM, until
//   the first contentful paint, and until the first transcript entry's text is in the DOM.
// - signInToRoom: BENCH_SIGN_INS (3, within the sign-in rate limit) fresh browsers sign in on
//   /sign-in?next=<room>; ms from the Sign in click until the room is usable (its Prompt
//   textbox visible). Median and each.
//
// The instance is fresh: the owner signs up over HTTP first (and so owns the seeded teams,
// which were made before any account); every browser context carries a person's cookies.
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import os from "node:os";
import { chromium, type Browser, type Page } from "@playwright/test";
import { chromiumLaunchOptions } from "../e2e/chromium";
import { createDb, type Db, directUrlOf } from "../server/db/client";
import { dropDatabase } from "../server/db/admin";
import { createTemporaryDatabase, temporaryDatabaseName, testServerUrl } from "../server/testing/temporary-db";
import { asSessionId, type SessionId } from "../server/ids";
import { SCRIPTED_CHOICE } from "../server/models/choice";
import type { EventPayload } from "../server/runtime/events";
import { appendNotified } from "../server/testing/append";
import { createSession } from "../server/runtime/sessions";
import { freePort } from "../server/testing/net";
import { signUpOverHttp, type HttpPerson } from "../server/testing/people";
import {
  ensureNextBuild,
  installFirstsProbe,
  installProbe,
  inviteWatcher,
  markerLatency,
  readProbe,
  signedInContext,
  startServer,
  stopServer,
  type FirstsProbe,
  type Probe,
} from "./browser";
import { commitRate, percentileOf as percentile, round, runBench, sleep } from "./support";

/** Events in each seeded room (6 a turn); the old figure was 2,000 (333 turns). */
const ROOM_EVENTS = (process.env.BENCH_ROOM_EVENTS ?? "20000,2000").split(",").map(Number);
const LOADS = Number(process.env.BENCH_LOADS ?? 3);
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 20_000);
const CHUNKS_PER_TX = 100;
const TX_GAP_MS = Number(process.env.BENCH_TX_GAP_MS ?? 20);
const TYPE_EVERY_MS = 100;
const LATENCY_SAMPLES = Number(process.env.BENCH_LATENCY_SAMPLES ?? 50);
const SIGN_INS = Number(process.env.BENCH_SIGN_INS ?? 3);
const OWNER = { name: "Bench Owner", email: "owner@bench.test", password: `bench-${randomBytes(6).toString("hex")}` };

const progress = (line: string) => process.stderr.write(`[bench:ui] ${line}\n`);

// ------------------------------------------------------------------ database side

async function newLead(db: Db, title: string): Promise<SessionId> {
  const s = await createSession(db, { title, model: SCRIPTED_CHOICE });
  return asSessionId(s.id);
}

async function seedHistory(db: Db, id: SessionId, turns: number, lastReply: string): Promise<number> {
  const payloads: EventPayload[] = [];
  for (let t = 0; t < turns; t++) {
    const turnId = `turn_${t}`;
    const reply = t === turns - 1 ? lastReply : `Reply ${t}: the picnic plan, step ${t}, with **sandwiches** and a list:\n\n- bread\n- cheese ${t}`;
    payloads.push(
      { kind: "turn_start", turnId },
      { kind: "step_start", turnId, step: 0 },
      { kind: "user_message", messageId: `msg_u_${t}`, text: `Prompt ${t}: what about step ${t} of the picnic?`, source: { kind: "human" } },
      {
        kind: "assistant_message",
        messageId: `msg_a_${t}`,
        turnId,
        step: 0,
        model: "scripted:keyless",
        text: reply,
        toolCalls: [],
        usage: { inputTokens: 100, outputTokens: 40 },
        interrupted: false,
      },
      { kind: "step_end", turnId, step: 0 },
      { kind: "turn_end", turnId, reason: "completed" },
    );
  }
  for (let i = 0; i < payloads.length; i += 200) {
    const batch = payloads.slice(i, i + 200);
    await appendNotified(db, id, batch);
  }
  return payloads.length;
}

const WORDS = "the quick picnic plan needs bread cheese apples lemonade a blanket and some shade near the river".split(" ");
const chunkText = (i: number) => `${WORDS[i % WORDS.length]} ${WORDS[(i * 7 + 3) % WORDS.length]} ${WORDS[(i * 13 + 5) % WORDS.length]} `;

// ------------------------------------------------------------------ phases

async function measureSignIns(browser: Browser, baseUrl: string, roomPath: string) {
  const times: number[] = [];
  for (let i = 0; i < SIGN_INS; i++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${baseUrl}/sign-in?next=${encodeURIComponent(roomPath)}`);
    await page.getByLabel("Email").fill(OWNER.email);
    await page.getByLabel("Password").fill(OWNER.password);
    const t0 = Date.now();
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("textbox", { name: "Prompt", exact: true }).waitFor({ state: "visible", timeout: 60_000 });
    times.push(Date.now() - t0);
    progress(`sign-in ${i + 1}: room usable after ${times.at(-1)} ms`);
    await context.close();
  }
  return { samples: SIGN_INS, medianMs: percentile(times, 50), perSignInMs: times };
}

async function measureLoads(browser: Browser, owner: HttpPerson, baseUrl: string, roomUrl: string, lastReply: string) {
  const loads: { seenMs: number | null; usableMs: number | null; visibleMs: number; longestTaskMs: number }[] = [];
  for (let i = 0; i < LOADS; i++) {
    const context = await signedInContext(browser, owner, baseUrl);
    const page = await context.newPage();
    await page.addInitScript(installProbe, lastReply);
    const t0 = Date.now();
    await page.goto(roomUrl, { waitUntil: "commit" });
    await page
      .getByRole("region", { name: "Transcript" })
      .locator('article[aria-label="Reply"]')
      .filter({ hasText: lastReply })
      .waitFor({ state: "visible", timeout: 60_000 });
    const visibleMs = Date.now() - t0;
    await page.waitForFunction(() => (window as unknown as { __probe: Probe }).__probe.usableAt !== null, null, { timeout: 60_000 }).catch(() => undefined);
    const probe = await readProbe(page);
    loads.push({
      seenMs: probe.loadSeenAt === null ? null : round(probe.loadSeenAt),
      usableMs: probe.usableAt === null ? null : round(probe.usableAt),
      visibleMs,
      longestTaskMs: round(Math.max(0, ...probe.longTasks)),
    });
    progress(`load ${i + 1}: usable after ${loads.at(-1)!.usableMs ?? "?"} ms (reply seen ${loads.at(-1)!.seenMs ?? "?"} ms, visible via Playwright after ${visibleMs} ms)`);
    await context.close();
  }
  return loads;
}

async function measurePhoneFirstScreen(browser: Browser, owner: HttpPerson, baseUrl: string, roomUrl: string) {
  const loads: { skeletonMs: number | null; firstPaintMs: number | null; firstTranscriptTextMs: number | null }[] = [];
  for (let i = 0; i < LOADS; i++) {
    const context = await signedInContext(browser, owner, baseUrl);
    const page = await context.newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.addInitScript(installFirstsProbe);
    await page.goto(roomUrl, { waitUntil: "commit" });
    await page.getByRole("region", { name: "Transcript" }).locator("article").first().waitFor({ state: "visible", timeout: 60_000 });
    const probe = await page.evaluate(() => (window as unknown as { __firsts: FirstsProbe }).__firsts);
    const ms = (v: number | null) => (v === null ? null : round(v));
    loads.push({ skeletonMs: ms(probe.skeletonAt), firstPaintMs: ms(probe.firstPaintAt), firstTranscriptTextMs: ms(probe.firstTextAt) });
    progress(`phone load ${i + 1}: skeleton ${loads.at(-1)!.skeletonMs} ms, first paint ${loads.at(-1)!.firstPaintMs} ms, transcript text ${loads.at(-1)!.firstTranscriptTextMs} ms`);
    await context.close();
  }
  const median = (pick: (l: (typeof loads)[number]) => number | null) => percentile(loads.flatMap((l) => pick(l) ?? []), 50);
  return {
    viewport: "390x844",
    loads: LOADS,
    skeletonMs: median((l) => l.skeletonMs),
    firstPaintMs: median((l) => l.firstPaintMs),
    firstTranscriptTextMs: median((l) => l.firstTranscriptTextMs),
    perLoad: loads,
  };
}

async function measureStreaming(db: Db, page: Page, id: SessionId) {
  const turnId = "turn_stream";
  await appendNotified(db, id, [{ kind: "turn_start", turnId }, { kind: "step_start", turnId, step: 0 }]);
  await page.locator('article[aria-label="Reply"][data-streaming]').waitFor({ state: "attached", timeout: 30_000 }).catch(() => undefined);
  const box = page.getByRole("textbox", { name: "Prompt", exact: true });
  await box.click();
  await page.evaluate(() => {
    const p = (window as unknown as { __probe: Probe }).__probe;
    p.longTasks = [];
    p.keyDelays = [];
    p.eventTimingKeydown = [];
  });

  const endMark = `STREAMEND-${randomBytes(4).toString("hex")}`;
  let full = "";
  let streaming = true;
  let typed = 0;
  const typing = (async () => {
    while (streaming) {
      await page.keyboard.press("KeyX");
      typed += 1;
      await sleep(TYPE_EVERY_MS);
    }
  })();

  const started = Date.now();
  let lastCommitAt = started;
  try {
    for (let i = 0; i < CHUNKS; i += CHUNKS_PER_TX) {
      const batch: EventPayload[] = [];
      for (let k = i; k < Math.min(CHUNKS, i + CHUNKS_PER_TX); k++) {
        const text = k === CHUNKS - 1 ? `${endMark} ` : chunkText(k);
        full += text;
        batch.push({ kind: "assistant_delta", turnId, step: 0, text });
      }
      await appendNotified(db, id, batch);
      if (TX_GAP_MS > 0) await sleep(TX_GAP_MS);
    }
    lastCommitAt = Date.now();
    // The last delta on screen, still streaming.
    let lastDeltaShownMs: number | null = null;
    await page
      .locator('article[aria-label="Reply"][data-streaming]')
      .filter({ hasText: endMark })
      .waitFor({ state: "attached", timeout: 60_000 })
      .then(() => (lastDeltaShownMs = Date.now() - lastCommitAt))
      .catch(() => undefined);
    await appendNotified(db, id, [
      {
        kind: "assistant_message",
        messageId: "msg_stream_final",
        turnId,
        step: 0,
        model: "scripted:keyless",
        text: full,
        toolCalls: [],
        usage: { inputTokens: 100, outputTokens: CHUNKS * 3 },
        interrupted: false,
      },
      { kind: "step_end", turnId, step: 0 },
      { kind: "turn_end", turnId, reason: "completed" },
    ]);
    const finalCommitAt = Date.now();
    let finalShownMs: number | null = null;
    await page
      .locator('article[aria-label="Reply"]:not([data-streaming])')
      .filter({ hasText: endMark })
      .waitFor({ state: "visible", timeout: 60_000 })
      .then(() => (finalShownMs = Date.now() - finalCommitAt))
      .catch(() => undefined);
    streaming = false;
    await typing;
    const probe = await readProbe(page);
    const etDelays = probe.eventTimingKeydown.map((e) => e.delay);
    return {
      chunks: CHUNKS,
      deltaEvents: CHUNKS,
      chunksPerTransaction: CHUNKS_PER_TX,
      transactions: Math.ceil(CHUNKS / CHUNKS_PER_TX),
      gapBetweenTransactionsMs: TX_GAP_MS,
      streamedChars: full.length,
      appendSeconds: round((lastCommitAt - started) / 1000, 2),
      lastDeltaOnScreenAfterLastCommitMs: lastDeltaShownMs,
      finalReplyVisibleAfterCommitMs: finalShownMs,
      longTasks: {
        count: probe.longTasks.length,
        maxMs: round(Math.max(0, ...probe.longTasks)),
        totalMs: round(probe.longTasks.reduce((a, b) => a + b, 0)),
      },
      inputDelay: {
        keysTyped: typed,
        keydownSamples: probe.keyDelays.length,
        p50Ms: percentile(probe.keyDelays, 50),
        p95Ms: percentile(probe.keyDelays, 95),
        maxMs: probe.keyDelays.length ? round(Math.max(...probe.keyDelays)) : null,
        eventTimingKeydownEntriesOver16Ms: probe.eventTimingKeydown.length,
        eventTimingMaxDelayMs: etDelays.length ? round(Math.max(...etDelays)) : null,
        eventTimingMaxDurationMs: probe.eventTimingKeydown.length ? round(Math.max(...probe.eventTimingKeydown.map((e) => e.duration))) : null,
      },
    };
  } finally {
    streaming = false;
    await typing.catch(() => undefined);
  }
}

/** Event-to-screen latency of prompts (user_message events) in every page at once. */
function measureLatency(db: Db, pages: Page[], id: SessionId) {
  return markerLatency(pages, LATENCY_SAMPLES, null, (i, marker) =>
    appendNotified(db, id, [{ kind: "user_message", messageId: `msg_lat_${i}`, text: `${marker} is this prompt on screen yet?`, source: { kind: "human" } }]),
  );
}

// ------------------------------------------------------------------ main

async function main(): Promise<void> {
  const started = performance.now();
  const adminUrl = testServerUrl();
  const name = temporaryDatabaseName("at_bench_ui_");
  let db: Db | null = null;
  let server: ChildProcess | null = null;
  let browser: Browser | null = null;
  let cleaned: Promise<void> | null = null;
  const cleanup = () =>
    (cleaned ??= (async () => {
      await browser?.close().catch(() => undefined);
      if (server) await stopServer(server).catch(() => undefined);
      await db?.$disconnect().catch(() => undefined);
      progress(`dropping database ${name}`);
      await dropDatabase(adminUrl, name).catch((e: unknown) => progress(`drop failed: ${String(e)}`));
    })());
  const onSignal = () => {
    progress("interrupted: cleaning up");
    void cleanup().finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  try {
    ensureNextBuild(progress);
    progress(`creating database ${name}`);
    const database = await createTemporaryDatabase(adminUrl, name);
    const url = directUrlOf(database);
    db = createDb(database, 4);
    // The machine's pace in the same run (the other benchmarks print their figures beside it).
    const commitsPerSecond = round(await commitRate(url, 1, 2_000));

    const rooms: { events: number; turns: number; lead: SessionId; lastReply: string }[] = [];
    for (const events of ROOM_EVENTS) {
      const turns = Math.ceil(events / 6);
      const lastReply = `Final seeded reply ${randomBytes(4).toString("hex")}: the picnic is planned.`;
      const lead = await newLead(db, `Bench: ${events} events`);
      rooms.push({ events: await seedHistory(db, lead, turns, lastReply), turns, lead, lastReply });
      progress(`seeded ${rooms.at(-1)!.events} events`);
    }
    const streamLead = await newLead(db, "Bench: streaming");

    const port = await freePort();
    progress(`starting the app server on port ${port}`);
    const s = await startServer(url, port);
    server = s.child;

    // A fresh instance: its first account owns it, and the teams seeded before any account.
    const owner = await signUpOverHttp(s.baseUrl, OWNER);
    const watcher = await inviteWatcher(s.baseUrl, owner, streamLead);

    browser = await chromium.launch(chromiumLaunchOptions);
    const chromiumVersion = browser.version();

    // Warm the server (first requests compile routes, open pools) on an unrelated page.
    {
      const ctx = await signedInContext(browser, owner, s.baseUrl);
      const warm = await ctx.newPage();
      await warm.goto(`${s.baseUrl}/teams/${streamLead}`);
      await warm.getByRole("region", { name: "Transcript" }).waitFor({ timeout: 60_000 });
      await ctx.close();
    }

    const teamRoomLoad = [];
    for (const room of rooms) {
      progress(`team room loads, ${room.events} events (${LOADS})`);
      const loads = await measureLoads(browser, owner, s.baseUrl, `${s.baseUrl}/teams/${room.lead}`, room.lastReply);
      const median = (pick: (l: (typeof loads)[number]) => number | null) => percentile(loads.flatMap((l) => pick(l) ?? []), 50);
      teamRoomLoad.push({
        seededEvents: room.events,
        seededTurns: room.turns,
        loads: LOADS,
        usableMs: median((l) => l.usableMs),
        teamRoomLoadMs: median((l) => l.seenMs),
        perLoad: loads,
      });
    }

    const smallest = rooms.reduce((a, b) => (b.events < a.events ? b : a));
    progress(`phone first screen, ${smallest.events} events (${LOADS})`);
    const phoneFirstScreen = await measurePhoneFirstScreen(browser, owner, s.baseUrl, `${s.baseUrl}/teams/${smallest.lead}`);

    progress(`sign-in to a usable room (${SIGN_INS})`);
    const signInToRoom = await measureSignIns(browser, s.baseUrl, `/teams/${streamLead}`);

    const context = await signedInContext(browser, owner, s.baseUrl);
    const page = await context.newPage();
    await page.addInitScript(installProbe, null);
    await page.goto(`${s.baseUrl}/teams/${streamLead}`);
    await page.getByRole("textbox", { name: "Prompt", exact: true }).waitFor({ timeout: 60_000 });

    progress(`streaming ${CHUNKS} chunks`);
    const streaming = await measureStreaming(db, page, streamLead);
    // The second person watches the same team in a browser of their own (opened after the
    // streaming phase, so it does not share the machine with it).
    const watcherContext = await signedInContext(browser, watcher, s.baseUrl);
    const watcherPage = await watcherContext.newPage();
    await watcherPage.addInitScript(installProbe, null);
    await watcherPage.goto(`${s.baseUrl}/teams/${streamLead}`);
    // Measured once the watcher has caught up with the whole log (the streamed reply is its last).
    await watcherPage
      .getByRole("region", { name: "Transcript" })
      .locator('article[aria-label="Reply"]')
      .filter({ hasText: /STREAMEND-/ })
      .waitFor({ state: "visible", timeout: 120_000 });
    progress(`event-to-screen latency (${LATENCY_SAMPLES} samples)`);
    const [latency, secondPerson] = await measureLatency(db, [page, watcherPage], streamLead);
    await context.close();
    await watcherContext.close();

    const result = {
      bench: "ui",
      at: new Date().toISOString(),
      machine: { cpus: os.cpus().length, node: process.version, chromium: chromiumVersion, headless: true, loadAverage: os.loadavg().map((l) => round(l, 2)) },
      database: { commitsPerSecond1Conn: commitsPerSecond },
      teamRoomLoad,
      teamRoomLoadNote:
        "usableMs: navigation start (page clock) to the last reply and an enabled Prompt box in the DOM and the next task run (goal for 20,000 events: < 1,000 ms); teamRoomLoadMs: to the reply's text in the DOM; visibleMs: page.goto call to Playwright seeing it visible",
      phoneFirstScreen: { seededEvents: smallest.events, ...phoneFirstScreen },
      signInToRoom,
      streaming,
      eventToScreen: { ...latency, secondPerson },
      totalSeconds: round((performance.now() - started) / 1000, 1),
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await cleanup();
  }
}

runBench(main);
