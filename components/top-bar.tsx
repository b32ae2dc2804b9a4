"use client";

import Link from "next/link";
import { authClient } from "./auth-client";
import { leaveToSignIn, useAccountStatus } from "./use-account";

/** The app's top bar: home, and the signed-in person's name (their account page) and Sign out. */
export function TopBar() {
  const me = useAccountStatus().data?.me;
  return (
    <header className="topbar">
      <Link href="/" className="brand">
        Agent Teams
      </Link>
      {me && (
        <nav className="topbar-account" aria-label="Account">
          <Link href="/account" title="Your account">
            {me.name}
          </Link>
          <button
            type="button"
            className="link-button"
            onClick={() => {
              void authClient.signOut().finally(leaveToSignIn);
            }}
          >
            Sign out
          </button>
        </nav>
      )}
    </header>
  );
}
