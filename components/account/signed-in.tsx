"use client";

import { Skeleton } from "../ui/skeleton";
import { InlineError } from "../ui/alert";
import { useRouter } from "next/navigation";
import { useEffect, type ReactNode } from "react";
import { signInHref } from "./safe-next";
import { useAccountStatus } from "./use-account";

/**
 * Pages for signed-in people: anyone else is sent to the sign-in page, which brings them back
 * here. The API refuses everything anyway; this only saves a page full of errors. A sign-out
 * elsewhere is noticed within RECHECK_MS (or on focus), and the page leaves too.
 */
export function SignedIn({ children, placeholder }: { children: ReactNode; placeholder?: ReactNode }) {
  const status = useAccountStatus({ watch: true });
  const router = useRouter();
  const anonymous = status.data !== undefined && status.data.me === null;
  useEffect(() => {
    if (anonymous) router.replace(signInHref(`${window.location.pathname}${window.location.search}${window.location.hash}`));
  }, [anonymous, router]);

  // A failed re-check keeps the page (the server may be restarting); only a first read that failed shows.
  if (status.error && !status.data) {
    return (
      <main className="page">
        <InlineError onRetry={() => void status.refetch()}>The app is not answering: {status.error.message}</InlineError>
      </main>
    );
  }
  if (!status.data && placeholder) return placeholder;
  if (!status.data || anonymous) {
    return (
      <main className="page">
        <Skeleton label={anonymous ? "Taking you to sign in…" : "Loading…"} rows={3} />
      </main>
    );
  }
  return children;
}
