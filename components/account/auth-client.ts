"use client";

import { createAuthClient } from "better-auth/react";

// Better Auth's browser client for what it serves under /api/auth (sign-up, sign-in, sign-out,
// display name, password). The browser holds no secret: the session is an HttpOnly cookie.
// Same origin: the server accepts state-changing requests only from the app's own pages.

export const authClient = createAuthClient({
  baseURL: typeof window === "undefined" ? undefined : window.location.origin,
  basePath: "/api/auth",
});

/** What a failed Better Auth call answers (the client's `error`). */
export interface AuthFailure {
  status: number;
  code?: string;
  message?: string;
}

/** A failed Better Auth call as a sentence a person can act on. */
export function authErrorText(error: AuthFailure): string {
  if (error.code === "SIGN_IN_DELAYED" && error.message) return error.message;
  if (error.status === 429) return "Too many attempts, try again in a minute";
  if (error.code === "SIGN_UP_CLOSED") return "Sign-up is by invitation: open the invite link you were sent";
  if (error.code === "INVALID_EMAIL_OR_PASSWORD") return "Wrong email or password";
  if (error.code === "USER_ALREADY_EXISTS" || error.code === "USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL") {
    return "An account with this email already exists: sign in instead";
  }
  return error.message || `The request failed (${error.status})`;
}

/**
 * Why the provider's sign-in came back refused (the `error` Better Auth puts on the sign-in
 * page's URL). Only known codes are put in words: the URL is anyone's to write.
 */
export function ssoErrorText(code: string): string {
  switch (code) {
    case "SIGN_UP_CLOSED":
    case "signup_disabled":
      return authErrorText({ status: 403, code: "SIGN_UP_CLOSED" });
    case "account_not_linked":
      return "An account with this email exists here, but the provider did not say the email is verified: sign in with your password";
    case "SSO_EMAIL_NOT_VERIFIED":
      return "The provider did not say your email is verified, so no account was made: ask your administrator";
    default:
      return "Sign-in through the provider did not succeed: try again, or sign in with your password";
  }
}
