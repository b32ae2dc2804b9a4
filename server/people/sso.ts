import type { Env } from "../env";

// OpenID Connect single sign-on: one provider per instance, configured by environment. Better
// Auth's generic OAuth plugin runs the flow (discovery, PKCE, state, ID token checked against
// the provider's keys); this module says what is configured and carries the invite a person
// was following through the provider's redirect.

/** The provider id in Better Auth's routes (the redirect URI is /api/auth/callback/oidc). */
export const SSO_PROVIDER_ID = "oidc";

/**
 * The invite link a person followed before going to the provider: set by the invite page,
 * read when their account is created on the way back (the callback is a top-level GET, which
 * a SameSite=Lax cookie accompanies), and short-lived.
 */
export const SSO_INVITE_COOKIE = "agent-teams-sso-invite";
export const SSO_INVITE_COOKIE_MAX_AGE_S = 600;

export interface SsoConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Shown as "Sign in with <name>". */
  name: string;
}

export function ssoConfigOf(env: Env): SsoConfig | null {
  if (!env.OIDC_ISSUER || !env.OIDC_CLIENT_ID || !env.OIDC_CLIENT_SECRET) return null;
  return { issuer: env.OIDC_ISSUER.replace(/\/+$/, ""), clientId: env.OIDC_CLIENT_ID, clientSecret: env.OIDC_CLIENT_SECRET, name: env.OIDC_NAME };
}

/** A cookie's value from a Cookie header. */
export function cookieValue(header: string | null | undefined, name: string): string | null {
  for (const part of (header ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return decodeURIComponent(part.slice(at + 1).trim());
  }
  return null;
}
