// Team memory against a real Postgres: full-text search over many memories, what a step pays
// for its memory context, and the time from a person's decision to the memory's first use in a
// model request. Figures only, no assertions.
//
//   npm run bench:memory           (TEST_DATABASE_URL, default postgresql://postgres@127.0.0.1:5432/postgres)
//
// Creates its own database, drops it at the end, prints ONE JSON object on stdout; progress on
// stderr. Knobs: BENCH_MEMORIES (approved memories of the searched team, default 100000),
// BENCH_CONTEXT_MEMORIES (of the context team, default 10000), BENCH_SAMPLES (default 300).
//
// - search: BENCH_MEMORIES approved memories (12 words each from a 5,000-word vocabulary, a tag)
//   in one team, inserted in one statement, beside BENCH_OTHER_TEAMS (default 500) teams of 20; memory_search's store call (searchMemories) for
//   BENCH_SAMPLES queries of two vocabulary words (web-search syntax: both), then of `a or b`;
//   p50/p99 ms and the mean hits.
// - context: the memory:relevant section a step's start renders (memoryContextProvider, one
//   statement) for a member whose latest prompt is 20 vocabulary words, with 0 and with
//   BENCH_CONTEXT_MEMORIES approved memories in its team; p50/p99 ms, and the section's size in
//   tokens (characters / 4) at the team's default bound.
// - decisionToContext: a proposal decided by a person, then a prompt naming it; from the
//   decision's commit to the Lead's model request that carries the memory in its context (the
//   keyless runtime, as the app runs it), BENCH_SAMPLES / 10 times; p50/p99 ms.
import os from "node:os";
import { performance } from "node:perf_hooks";
import { inTx } from "../server/db/client";
import type { ModelRequest } from "../server/models/types";
import { memoryContextProvider } from "../server/memory/context";
import { decideMemory, proposeMemory, searchMemories } from "../server/memory/store";
import { promptSession } from "../server/runtime/sessions";
import { newTestSession, startTestRuntime } from "../server/testing/runtime-harness";
import { percentileOf, progress, round, runBench, serverInfo, waitUntil, withBenchDatabase } from "./support";

const MEMORIES = Number(process.env.BENCH_MEMORIES ?? 100_000);
const CONTEXT_MEMORIES = Number(process.env.BENCH_CONTEXT_MEMORIES ?? 10_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 300);
const VOCABULARY = 5_000;
/** An instance has many teams: the planner's estimate for one team's rows depends on it. */
const OTHER_TEAMS = Number(process.env.BENCH_OTHER_TEAMS ?? 500);
const OTHER_MEMORIES = 20;

/** A vocabulary word, as the insert makes them (`w` + hex + `x`: one lexeme each, no stemming). */
const vocabularyWord = () => `w${Math.floor(Math.random() * VOCABULARY).toString(16)}x`;

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

async function main() {
  await withBenchDatabase("bench_memory", async (database) => {
    const server = await serverInfo(database.url);
    // The Lead's model records when a request first carries the decided memory's mark.
    const seen = new Map<string, number>();
    const playbook = (request: ModelRequest) => {
      for (const m of request.messages) if (m.role === "user") for (const mark of m.text.match(/zmark\d+z/g) ?? []) if (!seen.has(mark)) seen.set(mark, Date.now());
      return { text: "Noted.", toolCalls: [] };
    };
    const rt = await startTestRuntime(database, { team: true, playbook });
    try {
      const fill = async (teamId: string, n: number) =>
        rt.db.sql.$executeRaw`INSERT INTO memories (id, team_id, text, tags, status, proposed_by, decided_by, decided_at)
          SELECT 'mem_bench_' || ${teamId} || '_' || g, ${teamId},
                 (SELECT string_agg('w' || to_hex((random() * ${VOCABULARY - 1})::int) || 'x', ' ') FROM generate_series(1, 12) WHERE g > 0),
                 ARRAY['t' || (g % 50)], 'approved', '{"kind":"person","id":"usr_bench","name":"Bench"}'::jsonb,
                 '{"id":"usr_bench","name":"Bench"}'::jsonb, now()
            FROM generate_series(1, ${n}) g`;

      progress(`${MEMORIES} memories in one team, ${OTHER_TEAMS} other teams with ${OTHER_MEMORIES} each`);
      const searched = await newTestSession(rt.db, "Searched");
      const fillMs = (await timed(() => fill(searched, MEMORIES))).ms;
      for (let i = 0; i < OTHER_TEAMS; i++) await fill(await newTestSession(rt.db, `Other ${i}`), OTHER_MEMORIES);
      await rt.db.sql.$executeRaw`ANALYZE memories`;
      const search = async (query: () => string) => {
        const ms: number[] = [];
        let hits = 0;
        for (let i = 0; i < SAMPLES; i++) {
          const r = await timed(() => searchMemories(rt.db.sql, { teamId: searched, query: query() }));
          ms.push(r.ms);
          hits += r.value.length;
        }
        return { p50: percentileOf(ms, 50), p99: percentileOf(ms, 99), meanHits: round(hits / SAMPLES) };
      };
      const both = await search(() => `${vocabularyWord()} ${vocabularyWord()}`);
      const either = await search(() => `${vocabularyWord()} or ${vocabularyWord()}`);

      progress(`the context section at 0 and ${CONTEXT_MEMORIES} memories`);
      const provider = memoryContextProvider(rt.db.sql);
      const context = async (memories: number) => {
        const lead = await newTestSession(rt.db, `Context ${memories}`);
        if (memories > 0) await fill(lead, memories);
        await rt.db.sql.$executeRaw`ANALYZE memories`;
        const ms: number[] = [];
        const baseline: number[] = [];
        let chars = 0;
        for (let i = 0; i < SAMPLES; i++) {
          const prompt = Array.from({ length: 20 }, vocabularyWord).join(" ");
          await rt.db.sql.$executeRaw`INSERT INTO session_events (session_id, seq, kind, payload)
            SELECT ${lead}, COALESCE(max(seq), 0) + 1, 'user_message', jsonb_build_object('kind', 'user_message', 'text', ${prompt}::text, 'source', '{"kind":"human"}'::jsonb)
              FROM session_events WHERE session_id = ${lead}`;
          const r = await timed(async () => provider.render({ sessionId: lead, now: new Date() }));
          ms.push(r.ms);
          baseline.push((await timed(() => rt.db.sql.$queryRaw`SELECT 1`)).ms);
          chars += r.value?.length ?? 0;
        }
        return { memories, p50: percentileOf(ms, 50), p99: percentileOf(ms, 99), meanTokens: round(chars / SAMPLES / 4), selectOneP50: percentileOf(baseline, 50) };
      };
      const contexts = [await context(0), await context(CONTEXT_MEMORIES)];

      progress("decision to first use in a model request");
      const lead = await newTestSession(rt.db, "Decides");
      const latencies: number[] = [];
      for (let i = 0; i < Math.max(1, Math.round(SAMPLES / 10)); i++) {
        const mark = `zmark${i}z`;
        const { memory } = await inTx(rt.db, (tx) => proposeMemory(tx, { teamId: lead, text: `Release ${mark} ships on Fridays.`, tags: [], by: { kind: "person", id: "usr_bench", name: "Bench" } }));
        await inTx(rt.db, (tx) => decideMemory(tx, lead, memory.id, { id: "usr_bench", name: "Bench" }, { approve: true }));
        const decided = Date.now();
        await promptSession(rt.db, lead, { text: `When does release ${mark} ship?` });
        await waitUntil(async () => seen.has(mark), 30_000, `the memory ${mark} in a request`);
        latencies.push(seen.get(mark)! - decided);
        await waitUntil(async () => (await rt.db.inboxItem.count({ where: { sessionId: lead } })) === 0, 30_000, "the prompt taken");
      }

      process.stdout.write(
        `${JSON.stringify(
          {
            bench: "memory",
            at: new Date().toISOString(),
            machine: { cpus: os.cpus().length, loadAverage1m: round(os.loadavg()[0]!, 2), node: process.version, ...server },
            search: { memories: MEMORIES, otherTeams: OTHER_TEAMS, insertSeconds: round(fillMs / 1000), samples: SAMPLES, bothWordsMs: both, eitherWordMs: either },
            context: contexts,
            decisionToContextMs: { samples: latencies.length, p50: percentileOf(latencies, 50), p99: percentileOf(latencies, 99) },
          },
          null,
          2,
        )}\n`,
      );
    } finally {
      await rt.stop();
    }
  });
}

runBench(main);
