import { prismaAdapter } from "@better-auth/prisma-adapter";
import { betterAuth } from "better-auth";
import { APIError, createAuthMiddleware, getOAuthState, isAPIError } from "better-auth/api";
import { genericOAuth } from "better-auth/plugins";
import type { Db } from "../db/client";
import { findUnstorableText } from "../../shared/input-guard";
import { LIMITS } from "../../shared/limits";
import { asUserId } from "../ids";
import { revokeAllApiTokens } from "./api-tokens";
import { instanceStatus } from "./instance";
import { recordAudit } from "./audit";
import { claimSignInAttempt, signInSucceeded } from "./sign-in-throttle";
import { SSO_PROVIDER_ID } from "../../shared/sso";
import type { SsoConfig } from "./sso";
import { adoptOrphanTeams } from "./team-people";
import { claimInviteForSignUp, InviteTokenSchema, joinByClaimedInvite } from "./invites";

// Accounts, sign-in and database sessions, by Better Auth (docs/DECISIONS.md, People and access). It owns
// the users/auth_* tables through its Prisma adapter and serves /api/auth/*; this module only
// configures it and adds the instance's sign-up rule.

/** Set by the app server from the socket, replacing any value a client sent (rate limits key on it). */
export const CLIENT_IP_HEADER = "x-agent-teams-client-ip";

export interface AuthOptions {
  /** The app's public URL (APP_URL): cookies are `Secure` when it is https. */
  appUrl: string;
  /** Origins the app is served under (the web layer's allow-list). */
  origins: readonly string[];
  secret: string;
  /** Sign-in attempts per client address per minute. */
  signInPerMinute: number;
  /** OpenID Connect sign-in beside email and password (people/sso.ts). */
  sso?: SsoConfig | null;
}

/** Display names: trimmed, 1–64 characters. One check for sign-up and rename. */
function displayName(name: unknown): string {
  const trimmed = typeof name === "string" ? name.trim() : "";
  // One line: the name heads the person's prompts for the model ("From <name>:"). Control
  // characters and the Unicode line and paragraph separators would each start another.
  // Characters are code points (shared/limits.ts counts labels in characters, not UTF-16 units).
  const chars = [...trimmed].length;
  if (chars === 0 || chars > LIMITS.displayNameChars || /[\p{Cc}\p{Zl}\p{Zp}]/u.test(trimmed)) {
    throw new APIError("BAD_REQUEST", {
      message: `A display name is one line of 1–${LIMITS.displayNameChars} characters`,
      code: "INVALID_DISPLAY_NAME",
    });
  }
  return trimmed;
}

/** A profile picture's address: at most 2 KiB, http(s) only (no data: URLs that bloat every session read). */
function imageUrl(image: unknown): string | null {
  if (image === null || image === undefined || image === "") return null;
  let url: URL | null = null;
  try {
    url = typeof image === "string" && image.length <= LIMITS.imageUrlChars ? new URL(image) : null;
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) {
    throw new APIError("BAD_REQUEST", { message: `An image is an http(s) URL of at most ${LIMITS.imageUrlChars} characters`, code: "INVALID_IMAGE_URL" });
  }
  return image as string;
}

/** An email address within the length mail allows (the library checks its form). */
function emailAddress(email: string): string {
  if (email.length > LIMITS.emailChars) {
    throw new APIError("BAD_REQUEST", { message: `An email address has at most ${LIMITS.emailChars} characters`, code: "INVALID_EMAIL" });
  }
  return email;
}

/** Every field of a user row a request can set, checked before the library stores it. */
function userFields<T extends { name?: unknown; image?: unknown; email?: unknown }>(user: T): T {
  const out = { ...user };
  if ("name" in user && user.name !== undefined) out.name = displayName(user.name);
  if ("image" in user && user.image !== undefined) out.image = imageUrl(user.image);
  if ("email" in user && typeof user.email === "string") out.email = emailAddress(user.email);
  return out;
}

/** The client's address the app server put on the request (rate limits key on it). */
const clientOf = (headers: Headers | undefined): string => headers?.get(CLIENT_IP_HEADER) ?? "unknown";

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** Whether `value` (an answer's JSON) holds a `token` key, at most three levels down. */
function hasToken(value: unknown, depth = 0): boolean {
  if (depth > 3 || value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return value.some((v) => hasToken(v, depth + 1));
  return Object.entries(value).some(([k, v]) => k === "token" || hasToken(v, depth + 1));
}

function withoutTokens(value: unknown, depth = 0): unknown {
  if (depth > 3 || value === null || typeof value !== "object" || value instanceof Date) return value;
  if (Array.isArray(value)) return value.map((v) => withoutTokens(v, depth + 1));
  return Object.fromEntries(Object.entries(value).flatMap(([k, v]) => (k === "token" ? [] : [[k, withoutTokens(v, depth + 1)]])));
}

/**
 * The invite a sign-up follows: in the sign-up form's body, or, through single sign-on, in the
 * OAuth flow's state (the sign-in request's `additionalData`, kept by the server across the
 * provider's redirect and bound to that one flow).
 */
async function inviteTokenOf(ctx: { body?: unknown } | null | undefined): Promise<string | null> {
  const given = isRecord(ctx?.body) ? ctx.body.inviteToken : (await getOAuthState())?.inviteToken;
  const token = InviteTokenSchema.safeParse(given ?? undefined);
  return token.success ? token.data : null;
}

/** A sign-up answered by the provider (the OAuth callback) rather than by the form. */
const throughProvider = (ctx: { path?: string } | null | undefined): boolean => ctx?.path?.startsWith("/callback/") === true;

/** Sign-in answered by the provider: the account's name from what the provider says. */
function ssoPlugins(sso: SsoConfig | null | undefined) {
  if (!sso) return [];
  return [
    genericOAuth({
      config: [
        {
          providerId: SSO_PROVIDER_ID,
          name: sso.name,
          discoveryUrl: `${sso.issuer}/.well-known/openid-configuration`,
          requireIdTokenVerification: true,
          clientId: sso.clientId,
          clientSecret: sso.clientSecret,
          scopes: ["openid", "email", "profile"],
          pkce: true,
          mapProfileToUser: (profile) => {
            const name = [profile.name, profile.preferred_username, profile.email?.split("@")[0]].find((n) => typeof n === "string" && n.trim() !== "");
            return { name: typeof name === "string" ? name.trim().slice(0, 64) : "Someone" };
          },
        },
      ],
    }),
  ];
}

/** The error a refused provider callback redirects with (`?error=`), if it was refused. */
function refusalOf(returned: { headers?: unknown }): string | null {
  const location = returned.headers instanceof Headers ? returned.headers.get("location") : null;
  return location ? new URL(location, "http://localhost").searchParams.get("error") : null;
}

/** The routes that end in a new session: email sign-in and sign-up, and the provider's callback. */
const signsIn = (path: string): boolean => path === "/sign-in/email" || path === "/sign-up/email" || path.startsWith("/callback/");

export function createAuth(db: Db, opts: AuthOptions) {
  const origin = new URL(opts.appUrl).origin;
  return betterAuth({
    appName: "Agent Teams",
    baseURL: origin,
    basePath: "/api/auth",
    secret: opts.secret,
    trustedOrigins: [...opts.origins],
    telemetry: { enabled: false },
    // Failures that are not refusals reach the app server, which answers 503 while the database is away.
    onAPIError: { throw: true },
    // Listing another device's session (and revoking one by its token) would hand page script
    // the tokens; "sign out everywhere" (/revoke-sessions) needs none.
    disabledPaths: ["/list-sessions", "/revoke-session"],
    database: prismaAdapter(db, { provider: "postgresql", transaction: true }),
    user: {
      modelName: "user",
      // input: false: nobody can make themselves instance owner through the sign-up body.
      additionalFields: { instanceOwner: { type: "boolean", required: false, input: false } },
    },
    session: { modelName: "authSession" },
    account: {
      modelName: "authAccount",
      // A person signing in through the provider for the first time with the email of an
      // existing account gets that account, when the provider says the email is verified:
      // the provider is the authority on its people's addresses (docs/DECISIONS.md).
      accountLinking: { enabled: true, trustedProviders: [], requireLocalEmailVerified: false, allowDifferentEmails: false },
    },
    plugins: ssoPlugins(opts.sso),
    verification: { modelName: "authVerification" },
    emailAndPassword: { enabled: true, autoSignIn: true, minPasswordLength: LIMITS.passwordMinChars, maxPasswordLength: LIMITS.passwordMaxChars },
    rateLimit: {
      enabled: true,
      storage: "database",
      modelName: "authRateLimit",
      window: 60,
      max: 600,
      customRules: {
        "/sign-in/email": { window: 60, max: opts.signInPerMinute },
        "/sign-up/email": { window: 60, max: opts.signInPerMinute },
        "/sign-in/social": { window: 60, max: opts.signInPerMinute },
        "/change-password": { window: 60, max: opts.signInPerMinute },
      },
    },
    advanced: {
      cookiePrefix: "agent-teams",
      useSecureCookies: origin.startsWith("https:"),
      ipAddress: { ipAddressHeaders: [CLIENT_IP_HEADER] },
      defaultCookieAttributes: { httpOnly: true, sameSite: "lax" },
    },
    hooks: {
      // Each attempt on an account is counted before the password is checked (sign-in-throttle.ts).
      before: createAuthMiddleware(async (ctx) => {
        // Text Postgres cannot store (a NUL, a lone surrogate) is refused before anything reads
        // or writes it: the throttle below stores the email tried, the library the account.
        const unstorable = findUnstorableText(ctx.body, "body") ?? findUnstorableText(ctx.query, "query");
        if (unstorable) throw new APIError("BAD_REQUEST", { message: unstorable, code: "INVALID_INPUT" });
        if (ctx.path !== "/sign-in/email" || !isRecord(ctx.body) || typeof ctx.body.email !== "string") return;
        const wait = await claimSignInAttempt(db, ctx.body.email, clientOf(ctx.headers));
        if (wait === null) return;
        throw new APIError(
          "TOO_MANY_REQUESTS",
          { message: `Too many sign-in attempts on this account: try again in ${wait} s`, code: "SIGN_IN_DELAYED" },
          { "Retry-After": String(wait) },
        );
      }),
      // Session tokens live in the HttpOnly cookie only: no answer a page can read carries one
      // (sign-in, sign-up, get-session and change-password all would).
      after: createAuthMiddleware(async (ctx) => {
        const returned: unknown = ctx.context.returned;
        const signedIn = ctx.context.newSession;
        if (signsIn(ctx.path) && signedIn) {
          await signInSucceeded(db, signedIn.user, clientOf(ctx.headers));
          const via = ctx.path.startsWith("/callback/") ? "sso" : ctx.path.slice(1);
          await recordAudit(db.sql, { kind: "signed_in", actor: { id: signedIn.user.id, name: signedIn.user.name }, ip: clientOf(ctx.headers), detail: { via } });
        } else if (ctx.path === "/sign-in/email" && isAPIError(returned) && isRecord(ctx.body) && typeof ctx.body.email === "string") {
          await recordAudit(db.sql, { kind: "sign_in_failed", actor: { id: null, name: ctx.body.email.toLowerCase() }, ip: clientOf(ctx.headers), detail: { reason: returned.body?.code ?? returned.status } });
        } else if (throughProvider(ctx) && !signedIn && isAPIError(returned)) {
          // A refused callback redirects to the sign-in page with its reason; who it was is the
          // provider's to say, and the library does not pass it on.
          const reason = refusalOf(returned);
          if (reason) await recordAudit(db.sql, { kind: "sign_in_failed", actor: { id: null, name: opts.sso?.name ?? SSO_PROVIDER_ID }, ip: clientOf(ctx.headers), detail: { via: "sso", reason } });
        }
        // "Sign out everywhere" ends the person's API tokens too: every credential they hold.
        if (ctx.path === "/revoke-sessions" && !isAPIError(returned)) {
          const userId = ctx.context.session?.user.id;
          if (userId) await revokeAllApiTokens(db, asUserId(userId));
        }
        if (returned instanceof Response || !isRecord(returned) || !hasToken(returned)) return;
        return ctx.json(withoutTokens(returned) as Record<string, unknown>);
      }),
    },
    databaseHooks: {
      user: {
        create: {
          // A fresh instance: the first account is the owner. Later: open sign-up, or an invite.
          before: async (input, ctx) => {
            const user = userFields(input);
            // An address the provider does not vouch for could be anyone's: no account is made for it.
            if (throughProvider(ctx) && !input.emailVerified) {
              throw new APIError("FORBIDDEN", { message: "The provider did not say this email is verified", code: "SSO_EMAIL_NOT_VERIFIED" });
            }
            const status = await instanceStatus(db);
            if (!status.hasOwner) return { data: { ...user, instanceOwner: true } };
            // An invite link is claimed here (one link, one account) and joined once the account exists.
            const token = await inviteTokenOf(ctx);
            const claimed = token !== null && (await claimInviteForSignUp(db, token, user.email));
            if (status.openSignUp || claimed) return { data: { ...user, instanceOwner: null } };
            throw new APIError("FORBIDDEN", { message: "Sign-up is by invitation: open the invite link you were sent", code: "SIGN_UP_CLOSED" });
          },
          after: async (user, ctx) => {
            // Teams made before accounts existed belong to the instance's owner.
            if (user.instanceOwner === true) await adoptOrphanTeams(db, user.id);
            const token = await inviteTokenOf(ctx);
            if (token) await joinByClaimedInvite(db, { id: asUserId(user.id), name: user.name, email: user.email, instanceOwner: false }, token);
          },
        },
        update: {
          before: async (user) => ({ data: userFields(user) }),
        },
      },
      account: {
        create: {
          // The provider linked to an account that had a password: from now on the provider is
          // how it signs in. The password, every session and every API token end, so whoever set
          // the account up with that address (it was never verified here) keeps nothing.
          after: async (account) => {
            if (account.providerId !== SSO_PROVIDER_ID) return;
            const { count } = await db.authAccount.deleteMany({ where: { userId: account.userId, providerId: "credential" } });
            if (count === 0) return;
            await db.authSession.deleteMany({ where: { userId: account.userId } });
            await revokeAllApiTokens(db, asUserId(account.userId));
            const user = await db.user.findUnique({ where: { id: account.userId }, select: { name: true } });
            await recordAudit(db.sql, { kind: "sso_linked", actor: { id: account.userId, name: user?.name ?? "someone" }, detail: { provider: SSO_PROVIDER_ID } });
          },
        },
      },
      session: {
        create: {
          // The library stores the request's User-Agent header as sent: a header of many KiB on every session row otherwise.
          before: async (session) => ({ data: { ...session, userAgent: session.userAgent?.slice(0, LIMITS.userAgentChars) ?? null } }),
        },
      },
    },
  });
}

export type Auth = ReturnType<typeof createAuth>;
