import type { Env } from "../env";

// OpenID Connect single sign-on: one provider per instance, configured by environment. Better
// Auth's generic OAuth plugin runs the flow (discovery, PKCE, state, ID token checked against
// the provider's keys); this module says what is configured.

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
