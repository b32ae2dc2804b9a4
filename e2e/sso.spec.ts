import { type BrowserContext, expect, test, type Page } from "@playwright/test";
import { axeViolations } from "./axe";
import { createTemporaryDatabase, temporaryDatabaseName, testServerUrl } from "../server/testing/temporary-db";
import { anonymousContext, signUpOverApi, trpcMutation, trpcQuery, type TestPerson } from "./accounts";
import { startTestIdp, type IdpAccount } from "./oidc-provider";
import { startServer, stopServer } from "./server";

// Single sign-on against a real OpenID provider started here (the `oidc-provider` package), on
// a server of its own with a fresh instance: the first person through the provider becomes the
// owner; a person with a password account and the same, verified, email gets that account; an
// unverified email is not linked; with sign-up closed a stranger is refused, and a person
// following an invite link joins the team through the provider.

const port = Number(process.env.E2E_SSO_PORT ?? 3195);
const idpPort = Number(process.env.E2E_IDP_PORT ?? 3196);
const base = `http://127.0.0.1:${port}/`;
const IDP_NAME = "Test IdP";

const ACCOUNTS: Record<string, IdpAccount> = {
  olga: { email: "olga@sso.test", emailVerified: true, name: "Olga Owner" },
  ben: { email: "ben@sso.test", emailVerified: true, name: "Ben at the provider" },
  eve: { email: "eve@sso.test", emailVerified: false, name: "Eve at the provider" },
  carl: { email: "carl@sso.test", emailVerified: true, name: "Carl Stranger" },
  uma: { email: "uma@sso.test", emailVerified: false, name: "Uma Unverified" },
  dana: { email: "dana@sso.test", emailVerified: true, name: "Dana Invited" },
};
const BEN: TestPerson = { name: "Ben Local", email: "ben@sso.test", password: "ben-password-1" };
const EVE: TestPerson = { name: "Eve Local", email: "eve@sso.test", password: "eve-password-1" };

/** At the provider: its development login page (any login name is that account), then consent. */
async function signInAtProvider(page: Page, login: string): Promise<void> {
  await expect(page).toHaveURL(new RegExp(`^http://127\\.0\\.0\\.1:${idpPort}/interaction/`));
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("anything");
  await page.locator('button[type="submit"]').click();
  await page.getByRole("button", { name: "Continue" }).click();
}

async function expectAccessible(page: Page): Promise<void> {
  for (const width of [1440, 390]) {
    await page.setViewportSize({ width, height: 900 });
    const violations = await axeViolations(page);
    expect(violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([]);
  }
}

const accountLink = (page: Page, name: string) => page.getByRole("navigation", { name: "Account" }).getByRole("link", { name });

test("single sign-on: the first person is the owner, a verified email gets its account, closed sign-up refuses, an invite lets in", async ({ browser }) => {
  test.setTimeout(180_000);
  const idp = await startTestIdp(idpPort, base.replace(/\/$/, ""), ACCOUNTS);
  const database = await createTemporaryDatabase(testServerUrl(), temporaryDatabaseName("at_e2e_sso_"), { migrate: false });
  const server = await startServer(database.url, port, { OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: idp.clientId, OIDC_CLIENT_SECRET: idp.clientSecret, OIDC_NAME: IDP_NAME });
  const contexts: BrowserContext[] = [];
  const person = async () => {
    const context = await anonymousContext(browser, base);
    // The provider's development pages ask for a web font; nothing outside this machine is reached.
    await context.route(/^https:\/\/fonts\./, (route) => route.abort());
    contexts.push(context);
    return context.newPage();
  };
  try {
    // A fresh instance: the first person through the provider becomes its owner.
    const owner = await person();
    await owner.goto("/");
    await expect(owner.getByRole("heading", { name: "Create the owner account" })).toBeVisible();
    await expectAccessible(owner);
    await owner.getByRole("button", { name: `Create the owner account with ${IDP_NAME}` }).click();
    await signInAtProvider(owner, "olga");
    await expect(owner.getByRole("heading", { name: "New team" })).toBeVisible();
    await expect(accountLink(owner, "Olga Owner")).toBeVisible();
    const me = await trpcQuery<{ me: { instanceOwner: boolean; email: string } }>(owner.request, base, "account.status", undefined);
    expect(me.me).toMatchObject({ instanceOwner: true, email: "olga@sso.test" });

    // Ben has a password account; the provider vouches for the same email: he gets that account.
    expect((await trpcMutation(owner.request, base, "account.setOpenSignUp", { open: true })).status()).toBe(200);
    const ben = await person();
    const benId = await signUpOverApi(ben.request, base, BEN);
    await ben.context().clearCookies();
    await ben.goto("/sign-in");
    await expect(ben.getByRole("heading", { name: "Sign in" })).toBeVisible();
    await expectAccessible(ben);
    await ben.getByRole("button", { name: `Sign in with ${IDP_NAME}` }).click();
    await signInAtProvider(ben, "ben");
    await expect(accountLink(ben, BEN.name)).toBeVisible();
    expect((await trpcQuery<{ me: { id: string } }>(ben.request, base, "account.status", undefined)).me.id).toBe(benId);
    // From now on the provider is how Ben's account signs in: the password set up before (by
    // whoever set it up: the address was never verified here) no longer works.
    const byPassword = await ben.request.post(`${base}api/auth/sign-in/email`, { headers: { Origin: base.replace(/\/$/, "") }, data: { email: BEN.email, password: BEN.password } });
    expect(byPassword.status()).toBe(401);

    // Eve's provider does not vouch for her email: no account is taken over, she is told why.
    const eve = await person();
    await signUpOverApi(eve.request, base, EVE);
    await eve.context().clearCookies();
    await eve.goto("/sign-in");
    await eve.getByRole("button", { name: `Sign in with ${IDP_NAME}` }).click();
    await signInAtProvider(eve, "eve");
    await expect(eve.getByRole("alert").filter({ hasText: /\S/ })).toContainText("did not say the email is verified");
    await expect(eve.getByRole("heading", { name: "Sign in" })).toBeVisible();

    // Sign-up is open, but not to an address the provider does not vouch for.
    const uma = await person();
    await uma.goto("/sign-in");
    await uma.getByRole("button", { name: `Sign in with ${IDP_NAME}` }).click();
    await signInAtProvider(uma, "uma");
    await expect(uma.getByRole("alert").filter({ hasText: /\S/ })).toContainText("did not say your email is verified");

    // Sign-up closed: a stranger coming from the provider is refused.
    expect((await trpcMutation(owner.request, base, "account.setOpenSignUp", { open: false })).status()).toBe(200);
    const carl = await person();
    await carl.goto("/sign-in");
    await carl.getByRole("button", { name: `Sign in with ${IDP_NAME}` }).click();
    await signInAtProvider(carl, "carl");
    await expect(carl.getByRole("alert").filter({ hasText: /\S/ })).toContainText("Sign-up is by invitation");
    await expectAccessible(carl);

    // …while a person following an invite link joins through the provider.
    const team = (await (await trpcMutation(owner.request, base, "session.create", { title: "SSO room" })).json()) as { result: { data: { json: { id: string } } } };
    const teamId = team.result.data.json.id;
    const invite = (await (await trpcMutation(owner.request, base, "people.invite", { teamId, role: "member" })).json()) as { result: { data: { json: { token: string } } } };
    const dana = await person();
    await dana.goto(`/invite/${invite.result.data.json.token}`);
    await dana.getByRole("button", { name: `Join with ${IDP_NAME}` }).click();
    await signInAtProvider(dana, "dana");
    await expect(dana).toHaveURL(new RegExp(`/teams/${teamId}$`));
    await expect(dana.getByRole("heading", { name: "SSO room", level: 1 })).toBeVisible();
    await expect(dana.getByLabel("your role: member")).toBeVisible();

    // The owner's audit log has the sign-ins through the provider and Ben's account taken over by it.
    const { entries } = await trpcQuery<{ entries: { kind: string; actorName: string; detail: Record<string, unknown> }[] }>(owner.request, base, "audit.list", {});
    expect(entries).toContainEqual(expect.objectContaining({ kind: "signed_in", actorName: "Olga Owner", detail: { via: "sso" } }));
    expect(entries).toContainEqual(expect.objectContaining({ kind: "sso_linked", actorName: BEN.name }));
    expect(entries.filter((e) => e.kind === "signed_in" && e.actorName === "Carl Stranger")).toEqual([]);
    // The refused ones are there too, with the provider's name and the reason each was refused.
    const refused = entries.filter((e) => e.kind === "sign_in_failed" && e.actorName === IDP_NAME).map((e) => e.detail);
    expect(refused).toEqual(expect.arrayContaining([{ via: "sso", reason: "SIGN_UP_CLOSED" }, { via: "sso", reason: "account_not_linked" }, { via: "sso", reason: "SSO_EMAIL_NOT_VERIFIED" }]));
  } finally {
    for (const c of contexts) await c.close();
    await stopServer(server);
    await idp.close();
    await database.drop();
  }
});
