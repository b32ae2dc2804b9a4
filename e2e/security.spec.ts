import { expect, test } from "@playwright/test";

// The web layer as a browser meets it (docs/SPEC.md §13 Web security): every page carries the
// security headers, Next's own scripts run under the nonce-based CSP (no violation, the page
// works), and another site cannot frame the app or post to it. Unknown hosts and header-level
// refusals are covered over raw HTTP in server/http/security.test.ts.

test("pages carry the security headers, and the app runs under its Content-Security-Policy", async ({ page }) => {
  const violations: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy|Refused to (execute|load|apply|connect)/i.test(m.text())) violations.push(m.text());
  });
  const response = await page.goto("/sign-in");
  const headers = response!.headers();
  const csp = headers["content-security-policy"] ?? "";
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]{16,}' 'strict-dynamic'/);
  expect(csp).not.toContain("unsafe-eval");
  expect(headers["x-frame-options"]).toBe("DENY");
  expect(headers["x-content-type-options"]).toBe("nosniff");
  expect(headers["referrer-policy"]).toBe("same-origin");

  // Each load gets its own nonce, and Next's scripts carry it.
  const nonce = /'nonce-([^']+)'/.exec(csp)![1]!;
  const again = (await page.request.get("/sign-in")).headers()["content-security-policy"] ?? "";
  expect(/'nonce-([^']+)'/.exec(again)![1]).not.toBe(nonce);
  // The scripts the server rendered, read from the HTML itself: scripts Next inserts later
  // (route prefetches) need no nonce under 'strict-dynamic', and the DOM hides nonces anyway.
  const html = await response!.text();
  const scriptNonces = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => /\snonce="([^"]*)"/.exec(m[0])?.[1] ?? "");
  expect(scriptNonces.length).toBeGreaterThan(0);
  for (const n of scriptNonces) expect(n).toBe(nonce);

  // The page hydrated (a script-driven control works) and nothing was refused.
  await expect(page.getByRole("button").first()).toBeEnabled();
  expect(violations).toEqual([]);
});

test("another site can neither frame the app nor post to it", async ({ page, baseURL }) => {
  const appOrigin = new URL(baseURL!).origin;

  // A page that is not the app frames it; page load waits for the frame to settle.
  await page.goto("about:blank");
  await page.setContent(`<iframe id="f" src="${appOrigin}/sign-in"></iframe>`, { waitUntil: "load" });
  const framed = page.frames().find((f) => f !== page.mainFrame());
  // frame-ancestors 'none': the browser shows its error page instead of the app.
  expect(framed?.url()).toMatch(/^chrome-error:/);
  await expect(page.frameLocator("#f").getByRole("button")).toHaveCount(0);

  // A cross-site POST (what a foreign form or fetch sends) is refused before anything runs.
  const res = await page.request.post(`${appOrigin}/api/trpc/session.create`, {
    headers: { origin: "https://evil.example", "content-type": "application/json" },
    data: { json: { title: "forged" } },
  });
  expect(res.status()).toBe(403);
  expect(await res.json()).toMatchObject({ error: { code: "CROSS_SITE_REQUEST" } });
  const signUp = await page.request.post(`${appOrigin}/api/auth/sign-up/email`, {
    headers: { "sec-fetch-site": "cross-site", "content-type": "application/json" },
    data: { name: "Forger", email: "forger@example.test", password: "correct horse battery" },
  });
  expect(signUp.status()).toBe(403);
  expect(await signUp.json()).toMatchObject({ error: { code: "CROSS_SITE_REQUEST" } });
});
