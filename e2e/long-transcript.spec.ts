import { expect, test } from "@playwright/test";
import { createDb } from "../server/db/client";
import { createTemporaryDatabase, temporaryDatabaseName, testServerUrl } from "../server/testing/temporary-db";
import { asSessionId } from "../server/ids";
import { SCRIPTED_CHOICE } from "../server/models/choice";
import type { EventPayload } from "../server/runtime/events";
import { appendNotified } from "../server/testing/append";
import { createSession } from "../server/runtime/sessions";
import { anonymousContext, signUpOverApi } from "./accounts";
import { transcript } from "./helpers";
import { startServer, stopServer } from "./server";

// A long transcript opens at its end: the room reads the log's newest page, follows the live
// feed from there, and reads earlier pages only when asked ("Load earlier") or when a
// timeline link points further back. Its own server, on a database seeded through the log.

const port = Number(process.env.E2E_LONG_PORT ?? 3193);
const base = `http://127.0.0.1:${port}/`;
/** 1,200 events (6 a turn): six of the 200-event pages the room reads (use-session-live.ts). */
const TURNS = 200;
const PAGE = 200;
/** The turns whose prompt (the turn's third event) is held once the log from `firstSeq` on is. */
const turnsFrom = (firstSeq: number) => Array.from({ length: TURNS }, (_, t) => t).filter((t) => 6 * t + 3 >= firstSeq);

function turn(t: number): EventPayload[] {
  const turnId = `turn_${t}`;
  return [
    { kind: "turn_start", turnId },
    { kind: "step_start", turnId, step: 0 },
    { kind: "user_message", messageId: `msg_u_${t}`, text: `Prompt ${t}: what about step ${t}?`, source: { kind: "human", name: "Lena Long" } },
    {
      kind: "assistant_message", messageId: `msg_a_${t}`, turnId, step: 0, model: "scripted:keyless",
      text: `Reply ${t}: step ${t} is planned.`, toolCalls: [], usage: { inputTokens: 10, outputTokens: 5 }, interrupted: false,
    },
    { kind: "step_end", turnId, step: 0 },
    { kind: "turn_end", turnId, reason: "completed" },
  ];
}

test("a long transcript opens at its end, reads earlier pages on demand, and reads back to a linked moment", async ({ browser }) => {
  test.setTimeout(180_000);
  const database = await createTemporaryDatabase(testServerUrl(), temporaryDatabaseName("at_e2e_long_"));
  const db = createDb(database, 2);
  const server = await startServer(database.url, port);
  const context = await anonymousContext(browser, base);
  try {
    const lead = asSessionId((await createSession(db, { title: "Long history", model: SCRIPTED_CHOICE })).id);
    const payloads = Array.from({ length: TURNS }, (_, t) => turn(t)).flat();
    for (let i = 0; i < payloads.length; i += 300) await appendNotified(db, lead, payloads.slice(i, i + 300));
    const events = payloads.length;
    const page = await context.newPage();
    // A fresh instance: its first account owns it, and the team seeded before any account.
    await signUpOverApi(page.request, base, { name: "Lena Long", email: "lena@example.test", password: "lena-password-1" });

    await page.goto(`${base}teams/${lead}`);
    const prompts = transcript(page).getByRole("article", { name: "Prompt from Lena Long" });
    await expect(transcript(page).getByRole("article", { name: "Reply" }).last()).toContainText(`Reply ${TURNS - 1}:`);
    await expect(page.getByRole("textbox", { name: "Prompt", exact: true })).toBeVisible();
    // Only the newest page.
    const newest = turnsFrom(events - PAGE + 1);
    expect(newest.length).toBeLessThan(TURNS / 5);
    await expect(prompts).toHaveCount(newest.length);
    await expect(prompts.first()).toContainText(`Prompt ${newest[0]}:`);

    // The live feed goes on from that page's last event, without repeating it.
    await appendNotified(db, lead, [{ kind: "user_message", messageId: "msg_live", text: "A prompt after the page", source: { kind: "human", name: "Lena Long" } }]);
    await expect(prompts.last()).toContainText("A prompt after the page");
    await expect(transcript(page).getByText(`Reply ${TURNS - 1}:`)).toHaveCount(1);

    // Each "Load earlier" reads one more page, until the log's first event is in.
    const earlier = transcript(page).getByRole("button", { name: /^Load earlier/ });
    for (let pages = 2; pages * PAGE <= events; pages++) {
      await earlier.click();
      const held = turnsFrom(events - pages * PAGE + 1);
      await expect(prompts).toHaveCount(held.length + 1);
      await expect(prompts.first()).toContainText(`Prompt ${held[0]}:`);
    }
    await expect(earlier).toHaveCount(0);
    await expect(prompts.first()).toContainText("Prompt 0:");

    // A timeline link to the first turn's prompt (seq 3) reads back until it is in, and shows it.
    const linked = await context.newPage();
    await linked.goto(`${base}teams/${lead}?seq=3`);
    const moment = transcript(linked).getByRole("group", { name: "Linked moment" });
    await expect(moment).toContainText("Prompt 0:");
    await expect(moment).toBeInViewport();
  } finally {
    await context.close();
    await stopServer(server);
    await db.$disconnect();
    await database.drop().catch(() => undefined);
  }
});
