import { expect, test, type Page } from "@playwright/test";
import { createTeam } from "./helpers";

// Every page load is clean: no request the app makes fails, and the icons and web manifest
// the pages link to are served.

/** Every response of the page with a status of 400 or more, as "status url". */
function failedResponses(page: Page): string[] {
  const failed: string[] = [];
  page.on("response", (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
  });
  return failed;
}

test("the home page and a team room load without a failing request; icons and manifest are served", async ({ page, request }) => {
  const failed = failedResponses(page);
  const room = await createTeam(page, "Clean loads");
  await page.goto("/");
  await expect(page.getByRole("link", { name: "Clean loads" })).toBeVisible();
  await page.goto(`/teams/${room}`);
  await expect(page.getByRole("heading", { name: "Clean loads", level: 1 })).toBeVisible();
  await expect(page.getByRole("region", { name: "Task board" })).toBeVisible();

  // What the head links to: favicon, SVG icon, apple touch icon, manifest.
  const linked = await page.locator('head link[rel~="icon"], head link[rel="apple-touch-icon"], head link[rel="manifest"]').evaluateAll((links) =>
    links.map((l) => new URL((l as HTMLLinkElement).href).pathname),
  );
  expect(new Set(linked)).toEqual(new Set(["/favicon.ico", "/icon.svg", "/apple-touch-icon.png", "/manifest.webmanifest"]));
  for (const path of linked) expect((await request.get(path)).status(), path).toBe(200);

  const favicon = await request.get("/favicon.ico");
  expect(favicon.status()).toBe(200);
  expect(favicon.headers()["content-type"]).toMatch(/icon/);
  const manifest = await request.get("/manifest.webmanifest");
  expect(manifest.status()).toBe(200);
  const body = (await manifest.json()) as { name: string; start_url: string; display: string; icons: { src: string }[] };
  expect(body).toMatchObject({ name: "Agent Teams", start_url: "/", display: "standalone" });
  for (const icon of body.icons) expect((await request.get(icon.src)).status(), icon.src).toBe(200);

  expect(failed).toEqual([]);
});
