import { expect, test } from "@playwright/test";
import { anonymousContext, fillAccountForm, type TestPerson } from "./accounts";

// Accounts in the browser on the main e2e server (whose owner the setup project made): the
// sign-in gate and its `next`, open sign-up, a person's own account page (name, API tokens,
// password, signing out everywhere), and the sign-in rate limit.

const SAM: TestPerson = { name: "Sam Second", email: "sam@example.test", password: "sam-password-1" };
const SAM_NEW_PASSWORD = "sam-password-2";

test("signed-out visitors go to sign in and come back where they were going; sign-up is closed", async ({ browser, baseURL }) => {
  const context = await anonymousContext(browser, baseURL!);
  const page = await context.newPage();
  await page.goto("/account");
  await expect(page).toHaveURL(/\/sign-in\?next=%2Faccount$/);
  await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
  await expect(page.getByText("Sign-up is by invitation")).toBeVisible();
  await page.goto("/teams/ses_unknown?member=researcher");
  await expect(page).toHaveURL(`/sign-in?next=${encodeURIComponent("/teams/ses_unknown?member=researcher")}`);
  await page.goto("/sign-up");
  await expect(page.getByRole("alert").filter({ hasText: "Sign-up is by invitation" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Create account" })).toHaveCount(0);
  await context.close();
});

test("with sign-up open, a new person makes an account, uses and revokes an API token, renames, changes password and signs out everywhere", async ({
  page,
  browser,
  baseURL,
}, testInfo) => {
  // The instance owner opens sign-up.
  await page.goto("/account");
  const open = page.getByRole("checkbox", { name: "Anyone can sign up" });
  await open.check();
  await expect(open).toBeChecked();
  await expect(page.getByText("Anyone who reaches this server can make an account")).toBeVisible();

  const context = await anonymousContext(browser, baseURL!);
  try {
    const sam = await context.newPage();
    await sam.goto("/sign-in?next=/account");
    await sam.getByRole("link", { name: "Create an account" }).click();
    await expect(sam).toHaveURL(/\/sign-up\?next=%2Faccount$/);
    await fillAccountForm(sam, SAM);
    await sam.getByRole("button", { name: "Create account" }).click();
    await expect(sam.getByRole("heading", { name: "Your account" })).toBeVisible();
    await expect(sam.getByText(`Signed in as ${SAM.name} (${SAM.email})`)).toBeVisible();
    // The owner's teams are not Sam's.
    await sam.getByRole("link", { name: "Agent Teams" }).click();
    await expect(sam.getByText("No teams yet")).toBeVisible();
    await expect(sam.getByRole("list", { name: "Teams" }).getByRole("listitem")).toHaveCount(0);

    // A personal API token: shown once, acts as Sam through Authorization: Bearer, then revoked.
    await sam.getByRole("navigation", { name: "Account" }).getByRole("link", { name: SAM.name }).click();
    await sam.getByLabel("Token name").fill("nightly script");
    await sam.getByRole("button", { name: "Create token" }).click();
    const token = await sam.getByRole("group", { name: "New API token" }).getByRole("textbox").inputValue();
    expect(token).toMatch(/^at_/);
    await expect(sam.getByRole("group", { name: "New API token" })).toContainText("shown only once");
    await sam.screenshot({ path: testInfo.outputPath("account.png"), fullPage: true });
    const whoIs = async (bearer: string) => {
      const res = await fetch(new URL("/api/trpc/account.status", baseURL), { headers: { Authorization: `Bearer ${bearer}` } });
      return ((await res.json()) as { result: { data: { json: { me: { name: string } | null } } } }).result.data.json.me;
    };
    expect(await whoIs(token)).toMatchObject({ name: SAM.name });
    await sam.getByRole("button", { name: "Revoke nightly script" }).click();
    await expect(sam.getByRole("list", { name: "Your API tokens" }).getByRole("listitem")).toHaveCount(0);
    expect(await whoIs(token)).toBeNull();

    // A new display name shows at once.
    await sam.getByRole("textbox", { name: "Display name" }).fill("Samantha");
    await sam.getByRole("button", { name: "Save name" }).click();
    await expect(sam.getByRole("navigation", { name: "Account" }).getByRole("link", { name: "Samantha" })).toBeVisible();

    // A wrong current password is refused; the right one changes it and keeps this device signed in.
    await sam.getByLabel("Current password").fill("not-the-password");
    await sam.getByLabel("New password").fill(SAM_NEW_PASSWORD);
    await sam.getByRole("button", { name: "Change password" }).click();
    await expect(sam.getByRole("alert").filter({ hasText: "The current password is wrong" })).toBeVisible();
    await sam.getByLabel("Current password").fill(SAM.password);
    await sam.getByLabel("New password").fill(SAM_NEW_PASSWORD);
    await expect(sam.getByRole("checkbox", { name: "Sign out other devices" })).toBeChecked();
    // The change offers to end the API tokens too.
    await sam.getByRole("textbox", { name: "Token name" }).fill("old script");
    await sam.getByRole("button", { name: "Create token" }).click();
    const oldToken = await sam.getByRole("textbox", { name: "Token old script" }).inputValue();
    expect(await whoIs(oldToken)).toMatchObject({ name: "Samantha" });
    await sam.getByRole("checkbox", { name: "Revoke my API tokens too" }).check();
    await sam.getByRole("button", { name: "Change password" }).click();
    await expect(sam.getByRole("status").filter({ hasText: "Password changed; your other devices are signed out and your API tokens are revoked." })).toBeVisible();
    expect(await whoIs(oldToken)).toBeNull();
    await expect(sam.getByRole("list", { name: "Your API tokens" }).getByRole("listitem")).toHaveCount(0);
    await sam.reload();
    await expect(sam.getByRole("heading", { name: "Your account" })).toBeVisible();

    // Everywhere: this session ends too. Signing in again (new password) honours only a
    // same-site `next`.
    await sam.getByRole("button", { name: "Sign out everywhere" }).click();
    await expect(sam).toHaveURL(/\/sign-in$/);
    await sam.goto("/account");
    await expect(sam).toHaveURL(/\/sign-in\?next=%2Faccount$/);
    await sam.goto(`/sign-in?next=${encodeURIComponent("//evil.example/steal")}`);
    await sam.getByLabel("Email").fill(SAM.email);
    await sam.getByLabel("Password").fill(SAM_NEW_PASSWORD);
    await sam.getByRole("button", { name: "Sign in" }).click();
    await expect(sam.getByRole("heading", { name: "New team" })).toBeVisible();
    expect(new URL(sam.url()).pathname).toBe("/");
    expect(new URL(sam.url()).host).toBe(new URL(baseURL!).host);
  } finally {
    await context.close();
    await page.goto("/account");
    await page.getByRole("checkbox", { name: "Anyone can sign up" }).uncheck();
    await expect(page.getByRole("checkbox", { name: "Anyone can sign up" })).not.toBeChecked();
  }
});

// Last in this file on purpose: it uses up this address's sign-in attempts for a minute. No
// other test signs in on the main server (they reuse the owner's cookies).
test("sign-in attempts are rate limited and the page says so", async ({ browser, baseURL }) => {
  const context = await anonymousContext(browser, baseURL!);
  const page = await context.newPage();
  await page.goto("/sign-in");
  await page.getByLabel("Email").fill("nobody@example.test");
  const alert = page.getByRole("alert").filter({ hasText: /Wrong email or password|Too many attempts/ });
  let limited = false;
  // The limit is AUTH_SIGN_IN_PER_MINUTE (10 by default) per address; one more attempt than that is refused.
  for (let attempt = 0; attempt < 12 && !limited; attempt++) {
    // A new account each time: the limit per account (a few attempts) is not the one shown here.
    await page.getByLabel("Email").fill(`nobody-${attempt}@example.test`);
    await page.getByLabel("Password").fill(`wrong-password-${attempt}`);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(alert).toBeVisible();
    await expect(page.getByRole("button", { name: "Sign in" })).toBeEnabled();
    limited = (await alert.textContent())?.includes("Too many attempts, try again in a minute") ?? false;
  }
  expect(limited).toBe(true);
  await context.close();
});
