"use client";

import { Link } from "./ui/link";
import { authClient } from "./account/auth-client";
import { NotificationsLink } from "./account/notifications";
import { leaveToSignIn, useAccountStatus } from "./account/use-account";
import { Button } from "./ui/button";

/** The app's top bar: home, and for a signed-in person their notifications, name (their account page) and Sign out. */
export function TopBar() {
  const me = useAccountStatus().data?.me;
  return (
    <header className="topbar">
      <Link href="/" className="brand">
        Agent Teams
      </Link>
      {me && (
        <nav className="topbar-account" aria-label="Account">
          <NotificationsLink />
          <Link href="/account" title="Your account">
            {me.name}
          </Link>
          <Button
           
            variant="link"
            onClick={() => {
              void authClient.signOut().finally(leaveToSignIn);
            }}
          >
            Sign out
          </Button>
        </nav>
      )}
    </header>
  );
}
