// The single sign-on provider's id in Better Auth's routes (the redirect URI is
// /api/auth/callback/oidc): the server configures it (server/people/sso.ts), the sign-in form
// starts the flow with it.
export const SSO_PROVIDER_ID = "oidc";
