// What the benchmarks that drive a real browser share (bench/ui.ts, bench/workspace.ts): the
// production build served by scripts/e2e-server.ts on a bench database, people's browser
// contexts and tRPC calls over HTTP, the in-page probe, and event-to-screen latency by marker
// texts seen by a MutationObserver.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import type { Browser, Page } from "@playwright/test";
import { nextBuild } from "../scripts/next-build";
import type { SessionId } from "../server/ids";
import { signUpOverHttp, type HttpPerson } from "../server/testing/people";
import { percentileOf, round, sleep } from "./support";

const ROOT = path.resolve(import.meta.dirname, "..");

// ------------------------------------------------------------------ app server

/** One `next build` when there is none yet (the server is started with E2E_SKIP_BUILD=1). */
export function ensureNextBuild(progress: (line: string) => void): void {
  if (existsSync(path.join(ROOT, ".next", "BUILD_ID"))) return;
  progress("no .next/BUILD_ID: running next build");
  nextBuild(ROOT, ["ignore", process.stderr, "inherit"]);
}

// Servers still running when the bench process exits (a signal handler's process.exit, a
// crash) are told to stop, so none outlives it.
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGTERM");
});

/** The app (scripts/e2e-server.ts, production build) on an existing database `url`. */
export function startServer(url: string, port: number): Promise<{ child: ChildProcess; baseUrl: string; output: string[] }> {
  const child = spawn("node", ["--import", "tsx", "scripts/e2e-server.ts"], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), E2E_DATABASE_URL: url, E2E_SKIP_BUILD: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  child.once("exit", () => running.delete(child));
  const output: string[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server not ready after 60 s:\n${output.join("")}`)), 60_000);
    const onData = (d: Buffer) => {
      const s = d.toString();
      output.push(s);
      if (output.length > 200) output.shift();
      const m = /e2e server ready on (\S+)/.exec(s);
      if (m) {
        clearTimeout(timer);
        resolve({ child, baseUrl: m[1]!.replace(/\/$/, ""), output });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before it was ready:\n${output.join("")}`));
    });
  });
}

export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  child.kill("SIGTERM");
  const killed = await Promise.race([exited.then(() => false), sleep(10_000).then(() => true)]);
  if (killed) {
    child.kill("SIGKILL");
    await exited;
  }
}

// ------------------------------------------------------------------ people

/** A signed-up person's session cookies, for a browser context on the app's origin. */
export async function signedInContext(browser: Browser, person: HttpPerson, baseUrl: string) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addCookies(
    person.cookie.split("; ").map((pair) => {
      const eq = pair.indexOf("=");
      return { name: pair.slice(0, eq), value: pair.slice(eq + 1), url: baseUrl };
    }),
  );
  return context;
}

/** A tRPC mutation as a person over HTTP (cookie and the app's Origin). */
export async function mutate<T>(baseUrl: string, person: HttpPerson, path: string, input: unknown): Promise<T> {
  const res = await fetch(`${baseUrl}/api/trpc/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: baseUrl, cookie: person.cookie },
    body: JSON.stringify({ json: input }),
  });
  if (!res.ok) throw new Error(`${path} failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { result: { data: { json: T } } }).result.data.json;
}

/** A second person who watches a team: invited as a viewer by the owner, signed up with the link. */
export async function inviteWatcher(baseUrl: string, owner: HttpPerson, teamId: SessionId): Promise<HttpPerson> {
  const { token } = await mutate<{ token: string }>(baseUrl, owner, "people.invite", { teamId, role: "viewer" });
  const watcher = await signUpOverHttp(baseUrl, { name: "Bench Watcher", inviteToken: token });
  await mutate(baseUrl, watcher, "people.accept", { token });
  return watcher;
}

// ------------------------------------------------------------------ in-page instrumentation
// installProbe and watchMarkers run in the page (their source is sent there): self-contained.

export interface Probe {
  longTasks: number[];
  keyDelays: number[];
  eventTimingKeydown: { delay: number; duration: number }[];
  loadSeenAt: number | null;
  /** The load's reply and an enabled Prompt box were in the DOM, and the next task ran (the main thread was free). */
  usableAt: number | null;
  seen: Record<string, number>;
}

/** Runs in the page before any of its scripts (page.addInitScript); `want`: a reply text to time the load by. */
export function installProbe(want: string | null): void {
  const probe: Probe = { longTasks: [], keyDelays: [], eventTimingKeydown: [], loadSeenAt: null, usableAt: null, seen: {} };
  (window as unknown as { __probe: Probe }).__probe = probe;
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) probe.longTasks.push(e.duration);
    }).observe({ type: "longtask", buffered: true });
  } catch {
    // longtask unsupported: the figures stay empty
  }
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries() as PerformanceEventTiming[]) {
        if (e.name === "keydown") probe.eventTimingKeydown.push({ delay: e.processingStart - e.startTime, duration: e.duration });
      }
    }).observe({ type: "event", buffered: true, durationThreshold: 16 } as PerformanceObserverInit);
  } catch {
    // Event Timing unsupported
  }
  window.addEventListener("keydown", (e) => probe.keyDelays.push(performance.now() - e.timeStamp), true);
  if (want) {
    const mo = new MutationObserver(() => {
      if (probe.loadSeenAt === null) {
        const replies = document.querySelectorAll('section[aria-label="Transcript"] article[aria-label="Reply"]');
        const last = replies[replies.length - 1];
        if (last?.textContent?.includes(want)) probe.loadSeenAt = performance.now();
      }
      if (probe.loadSeenAt !== null && document.querySelector("form.composer textarea:not([disabled])")) {
        mo.disconnect();
        // Usable once whatever the page was doing in this task is done.
        setTimeout(() => (probe.usableAt = performance.now()), 0);
      }
    });
    mo.observe(document, { childList: true, subtree: true, characterData: true });
  }
}

export interface FirstsProbe {
  /** The first skeleton block in the DOM, the first paint with content, the first transcript entry's text in the DOM. */
  skeletonAt: number | null;
  firstPaintAt: number | null;
  firstTextAt: number | null;
}

/** Runs in the page before any of its scripts: when the page first shows its shape, anything, and transcript text. */
export function installFirstsProbe(): void {
  const probe: FirstsProbe = { skeletonAt: null, firstPaintAt: null, firstTextAt: null };
  (window as unknown as { __firsts: FirstsProbe }).__firsts = probe;
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (e.name === "first-contentful-paint") probe.firstPaintAt = e.startTime;
    }).observe({ type: "paint", buffered: true });
  } catch {
    // Paint Timing unsupported
  }
  const mo = new MutationObserver(() => {
    if (probe.skeletonAt === null && document.querySelector(".skeleton")) probe.skeletonAt = performance.now();
    if (probe.firstTextAt === null && document.querySelector('section[aria-label="Transcript"] article')?.textContent) probe.firstTextAt = performance.now();
    if (probe.skeletonAt !== null && probe.firstTextAt !== null) mo.disconnect();
  });
  mo.observe(document, { childList: true, subtree: true, characterData: true });
}

/**
 * Stamps each LATMARK-<n>- text when it first enters the DOM, on the epoch clock
 * (timeOrigin + now) so it compares with the bench's Date.now(). `scope`: a CSS selector;
 * only text inside a matching element counts (null: the whole page).
 */
export function watchMarkers(scope: string | null): void {
  // No named inner functions: tsx would wrap them in a helper the page does not have.
  const probe = (window as unknown as { __probe: Probe }).__probe;
  const re = /LATMARK-(\d+)-/g;
  new MutationObserver((records) => {
    const at = performance.timeOrigin + performance.now();
    for (const r of records) {
      for (const n of r.type === "characterData" ? [r.target] : [...r.addedNodes]) {
        const el = n instanceof Element ? n : n.parentElement;
        const texts =
          scope === null || el?.closest(scope)
            ? [n.textContent ?? ""]
            : // A subtree added around the scope (or detached already): the scope's elements inside it.
              n instanceof Element
              ? [...n.querySelectorAll(scope)].map((e) => e.textContent ?? "")
              : [];
        for (const t of texts) {
          for (const m of t.matchAll(re)) if (probe.seen[m[1]!] === undefined) probe.seen[m[1]!] = at;
        }
      }
    }
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
}

export const readProbe = (page: Page) => page.evaluate(() => (window as unknown as { __probe: Probe }).__probe);

// ------------------------------------------------------------------ event-to-screen latency

export interface ScreenLatency {
  samples: number;
  seen: number;
  p50Ms: number | null;
  p95Ms: number | null;
  maxMs: number | null;
  minMs: number | null;
}

/**
 * Event-to-screen latency in every page at once (each page's own clock, synchronised by
 * timeOrigin): `samples` changes, each made visible by `commit` with a unique marker text
 * `LATMARK-<i>-<hex>` and stamped with Date.now() when the commit resolves, 80–150 ms apart.
 * The pages must carry installProbe; `scope` is watchMarkers'.
 */
export async function markerLatency(
  pages: Page[],
  samples: number,
  scope: string | null,
  commit: (i: number, marker: string) => Promise<unknown>,
): Promise<ScreenLatency[]> {
  for (const page of pages) await page.evaluate(watchMarkers, scope);
  const committed = new Map<string, number>();
  for (let i = 0; i < samples; i++) {
    await commit(i, `LATMARK-${i}-${randomBytes(3).toString("hex")}`);
    committed.set(String(i), Date.now());
    await sleep(80 + Math.random() * 70);
  }
  return Promise.all(
    pages.map(async (page) => {
      const deadline = Date.now() + 10_000;
      let seen: Record<string, number> = {};
      while (Date.now() < deadline) {
        seen = (await readProbe(page)).seen;
        if (Object.keys(seen).length >= samples) break;
        await sleep(100);
      }
      const latencies = [...committed].flatMap(([k, at]) => (seen[k] === undefined ? [] : [seen[k] - at]));
      return {
        samples,
        seen: latencies.length,
        p50Ms: percentileOf(latencies, 50),
        p95Ms: percentileOf(latencies, 95),
        maxMs: latencies.length ? round(Math.max(...latencies)) : null,
        minMs: latencies.length ? round(Math.min(...latencies)) : null,
      };
    }),
  );
}
