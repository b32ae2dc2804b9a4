import { expect, test } from "@playwright/test";
import { createTemporaryDatabase, temporaryDatabaseName, testServerUrl } from "../server/testing/temporary-db";
import { startFakeProviderServer } from "../server/models/testing/fake-provider-server";
import { anonymousContext, createInstanceOwner, type TestPerson } from "./accounts";
import { agent, send, transcript } from "./helpers";
import { startServer, stopServer } from "./server";

// A real provider failing, as a person sees it (SPEC.md §15): an app server of its own whose
// OpenAI-compatible provider is the fake provider in this process. A 429 shows "retrying in
// N s" live and then a past note; a Stop during a backoff ends the turn at once; a bad key
// ends the turn with a readable error in the transcript and the roster, the key nowhere.

const port = Number(process.env.E2E_RELIABILITY_PORT ?? 3192);
const base = `http://127.0.0.1:${port}/`;
const KEY = "sk-e2e-reliability-0123456789abcdef";
const OWNER: TestPerson = { name: "Rita Reliable", email: "rita@reliability.test", password: "rita-password-1" };

test("provider failures in the room: a live retry line, a Stop during the backoff, a permanent error in transcript and roster", async ({ browser }) => {
  test.setTimeout(180_000);
  const fake = await startFakeProviderServer();
  const database = await createTemporaryDatabase(testServerUrl(), temporaryDatabaseName("at_e2e_reliability_"), { migrate: false });
  // Its own model list: the fake provider's model (the e2e server's default list offers others).
  const MODELS = JSON.stringify([{ provider: "openai-compatible", model: "fake-gpt", label: "Fake GPT" }]);
  const server = await startServer(database.url, port, { OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: KEY, MODELS });
  const context = await anonymousContext(browser, base);
  try {
    const page = await context.newPage();
    await createInstanceOwner(page, OWNER);
    // By value ("provider:model"): the option's text also says its price.
    await page.getByLabel("Model").selectOption("openai-compatible:fake-gpt");
    await page.getByLabel("Title").fill("Flaky provider");
    await page.getByRole("button", { name: "Create team" }).click();
    await expect(page).toHaveURL(/\/teams\/ses_/);

    // 429 with Retry-After: the live line counts down, then stays as a note above the reply.
    fake.enqueue({ status: 429, message: "slow down", headers: { "retry-after": "3" } }, { text: ["All ", "good."] });
    await send(page, "hello");
    const live = transcript(page).getByRole("status").filter({ hasText: /^Retrying in [1-3] s \(429 rate limited\)$/ });
    await expect(live).toBeVisible();
    await expect(transcript(page).getByRole("article", { name: "Reply" }).getByText("All good.")).toBeVisible({ timeout: 10_000 });
    await expect(transcript(page).getByRole("note").filter({ hasText: "Retried after 429 rate limited" })).toBeVisible();
    await expect(live).toHaveCount(0);

    // A Stop during a long backoff ends the turn at once, with no second request.
    fake.reset();
    fake.enqueue({ status: 429, message: "much later", headers: { "retry-after": "45" } });
    await send(page, "again");
    await expect(transcript(page).getByRole("status").filter({ hasText: /^Retrying in 4[0-5] s/ })).toBeVisible();
    await agent(page).getByRole("button", { name: "Stop", exact: true }).click();
    await expect(transcript(page).getByRole("note").filter({ hasText: /^Turn aborted/ })).toBeVisible({ timeout: 5_000 });
    await expect(transcript(page).getByRole("note").filter({ hasText: "The turn ended while waiting to retry (429 rate limited)" })).toBeVisible();
    expect(fake.requests).toHaveLength(1);

    // A bad key: no retry, a readable error in the transcript and beside the status in the roster.
    fake.reset();
    fake.enqueue({ status: 401, message: "Incorrect API key provided: {key}." });
    await send(page, "and now?");
    const error = "openai-compatible:fake-gpt: 401 not authorised (check the API key): Incorrect API key provided: [redacted].";
    await expect(transcript(page).getByRole("note").filter({ hasText: `Turn error: ${error}` })).toBeVisible();
    const roster = page.getByRole("region", { name: "Roster" });
    const failed = roster.getByText(`Last turn failed: ${error}`);
    await expect(failed).toBeVisible();
    await expect(failed).toHaveAttribute("title", error);
    expect(fake.requests).toHaveLength(1);
    expect(await page.content()).not.toContain(KEY);
  } finally {
    // Each step whatever the one before did: a server left running would hold the port.
    await context.close().catch(() => undefined);
    await stopServer(server);
    await database.drop();
    await fake.close();
  }
});
