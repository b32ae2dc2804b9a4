import { describe, expect } from "vitest";
import { parseEnv } from "../env";
import { startAppServer, type AppServer } from "../main";
import type { SessionEvent } from "../runtime/events";
import { databaseTest } from "../testing/fixtures";
import { httpClient } from "../testing/http-client";
import { signUpOverHttp, type HttpPerson } from "../testing/people";
import { waitFor } from "../testing/runtime-harness";
import type { SessionLiveMessage as LiveMessage } from "./feed-readers";

// Two app server processes' worth of stack (HTTP, SSE, runtime, LISTEN/NOTIFY) on one
// database: a prompt sent to one server streams live through the other. One person, signed up
// on server A, owns the teams; their session cookie works on both servers (one database).

const env = parseEnv({ PORT: "0", HOST: "127.0.0.1", SCRIPTED_MODEL_DELAY_MS: "5" });

let ana: HttpPerson;

function client(server: AppServer) {
  return httpClient(server.url, { cookie: ana.cookie });
}

function subscribe(server: AppServer, sessionId: string, lastEventId: string | null) {
  const events: SessionEvent[] = [];
  const ids: string[] = [];
  const lastSeqOfBatch: string[] = [];
  const sub = client(server).session.live.subscribe(
    { sessionId, lastEventId },
    {
      onData: ({ id, data }: { id: string; data: LiveMessage }) => {
        if (data.type !== "events") return;
        ids.push(id);
        events.push(...data.events);
        lastSeqOfBatch.push(String(data.events.at(-1)!.seq));
      },
    },
  );
  return { events, ids, lastSeqOfBatch, close: () => sub.unsubscribe() };
}

const turnsEnded = (events: SessionEvent[]) => events.filter((e) => e.payload.kind === "turn_end").length;

/** Two app servers on the file's database, closed after the file. */
const it = databaseTest()
  .extend("a", { scope: "file" }, async ({ tdb }, { onCleanup }) => {
    const a = await startAppServer({ env, database: tdb, pages: false, log: () => undefined });
    onCleanup(() => a.close());
    return a;
  })
  .extend("b", { scope: "file" }, async ({ tdb }, { onCleanup }) => {
    const b = await startAppServer({ env, database: tdb, pages: false, log: () => undefined });
    onCleanup(() => b.close());
    return b;
  });

it.beforeAll(async ({ a }) => {
  ana = await signUpOverHttp(a.url, { name: "Ana" });
});

describe("the live session feed over SSE", () => {
  it("streams a prompt sent to one server through another, in order, with the last seq of each batch as the event id", async ({ a, b }) => {
    const session = await client(a).session.create.mutate({ title: "two servers" });
    const live = subscribe(b, session.id, null);
    await client(a).session.prompt.mutate({ sessionId: session.id, text: "hello from server A" });
    await waitFor(() => turnsEnded(live.events) === 1, 15_000, "the turn to stream through B");
    live.close();

    expect(live.events.map((e) => e.seq)).toEqual(live.events.map((_, i) => i + 1));
    expect(live.ids).toEqual(live.lastSeqOfBatch);
    expect(live.events.some((e) => e.payload.kind === "assistant_delta")).toBe(true);
    const prompt = live.events.find((e) => e.payload.kind === "user_message" && e.payload.text === "hello from server A");
    // The person behind the cookie is the prompt's author.
    expect(prompt?.payload).toMatchObject({ source: { kind: "human", name: "Ana", userId: expect.any(String) } });
    expect(live.events[0]!.createdAt).toBeInstanceOf(Date);
  });

  it("resumes after a disconnect from the last event id with no gap and no duplicate", async ({ a, b }) => {
    const session = await client(a).session.create.mutate({ title: "resume" });
    await client(a).session.prompt.mutate({ sessionId: session.id, text: "first" });
    const first = subscribe(b, session.id, null);
    await waitFor(() => turnsEnded(first.events) === 1, 15_000, "first turn");
    first.close();
    const lastSeen = first.events.at(-1)!.seq;

    // While nobody listens, another turn runs.
    await client(b).session.prompt.mutate({ sessionId: session.id, text: "second" });
    await waitFor(async () => {
      const page = await client(a).session.transcript.query({ sessionId: session.id, limit: 1000 });
      return turnsEnded(page.events) === 2;
    }, 15_000, "second turn");

    const resumed = subscribe(a, session.id, String(lastSeen));
    const all = await client(a).session.transcript.query({ sessionId: session.id, limit: 1000 });
    await waitFor(() => resumed.events.length === all.events.length - lastSeen, 15_000, "the missed events");
    resumed.close();
    expect([...first.events, ...resumed.events].map((e) => e.seq)).toEqual(all.events.map((e) => e.seq));
  });

  it("answers bad input with a typed error code", async ({ a }) => {
    await expect(client(a).session.prompt.mutate({ sessionId: "ses_missing", text: "hi" })).rejects.toMatchObject({
      data: { code: "NOT_FOUND", appCode: "SESSION_NOT_FOUND", httpStatus: 404 },
    });
    await expect(client(a).session.create.mutate({ title: "" })).rejects.toMatchObject({
      data: { code: "BAD_REQUEST", appCode: "INVALID_INPUT", httpStatus: 400 },
    });
  });
});
