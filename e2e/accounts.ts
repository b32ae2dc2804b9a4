import path from "node:path";
import { expect, type APIRequestContext, type Browser, type BrowserContext, type Page } from "@playwright/test";

// People for the end-to-end tests. Sign-in is rate limited (AUTH_SIGN_IN_PER_MINUTE), so each
// person signs up or in once and their cookies are reused: the instance's owner of the main e2e
// server is made once by the setup project (auth.setup.ts) and kept in OWNER_STATE, which every
// test's context starts from (playwright.config.ts).

export interface TestPerson {
  name: string;
  email: string;
  password: string;
}

/** The owner of the main e2e server's fresh instance, made through the fresh-instance page. */
export const OWNER: TestPerson = { name: "Olive Owner", email: "olive@example.test", password: "olive-password-1" };

export const OWNER_STATE = path.join(import.meta.dirname, ".auth", "owner.json");

/**
 * A browser context with nobody signed in, for another server's fresh instance. Contexts
 * otherwise start from the owner's cookies, and cookies do not tell ports apart.
 */
export async function anonymousContext(browser: Browser, baseURL: string): Promise<BrowserContext> {
  return browser.newContext({ baseURL, storageState: undefined });
}

/** Makes the first account of a fresh instance (its owner) through the page a first visitor sees. */
export async function createInstanceOwner(page: Page, person: TestPerson, screenshot?: string): Promise<void> {
  await page.goto("/");
  await expect(page).toHaveURL(/\/sign-in$/);
  await expect(page.getByRole("heading", { name: "Create the owner account" })).toBeVisible();
  await expect(page.getByText("This is a fresh instance")).toBeVisible();
  await fillAccountForm(page, person);
  if (screenshot) await page.screenshot({ path: screenshot });
  await page.getByRole("button", { name: "Create owner account" }).click();
  await expect(page.getByRole("heading", { name: "New team" })).toBeVisible();
  await expect(page.getByRole("navigation", { name: "Account" }).getByRole("link", { name: person.name })).toBeVisible();
}

export async function fillAccountForm(page: Page, person: TestPerson): Promise<void> {
  await page.getByLabel("Name", { exact: true }).fill(person.name);
  await page.getByLabel("Email", { exact: true }).fill(person.email);
  await page.getByLabel("Password", { exact: true }).fill(person.password);
}

/**
 * Signs a person up through the real /api/auth endpoint, as the app's own page would (same
 * Origin); the session cookie lands in the request context's cookie jar (a page's context).
 */
export async function signUpOverApi(request: APIRequestContext, baseURL: string, person: TestPerson, inviteToken?: string): Promise<string> {
  const origin = new URL(baseURL).origin;
  const res = await request.post(`${origin}/api/auth/sign-up/email`, {
    headers: { Origin: origin },
    data: { name: person.name, email: person.email, password: person.password, ...(inviteToken ? { inviteToken } : {}) },
  });
  expect(res.status(), await res.text()).toBe(200);
  const body = (await res.json()) as { user: { id: string } };
  return body.user.id;
}

/** A tRPC mutation over HTTP from a page's context (its cookies), with the app's Origin. */
export async function trpcMutation(request: APIRequestContext, baseURL: string, path: string, input: unknown) {
  const origin = new URL(baseURL).origin;
  return request.post(`${origin}/api/trpc/${path}`, { headers: { Origin: origin }, data: { json: input } });
}

/** A tRPC query over HTTP from a page's context (its cookies). */
export async function trpcQuery<T>(request: APIRequestContext, baseURL: string, path: string, input: unknown): Promise<T> {
  const origin = new URL(baseURL).origin;
  const res = await request.get(`${origin}/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`);
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as { result: { data: { json: T } } }).result.data.json;
}
