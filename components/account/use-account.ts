"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback } from "react";
import { useTRPC } from "../trpc";
import { useHydrated } from "../use-hydrated";

/** How often a signed-in page re-reads who is signed in (a sign-out in another tab or device). */
const RECHECK_MS = 30_000;

/**
 * The instance (fresh? sign-up open?) and who is signed in: `me` is null when nobody is.
 * `watch`: re-read it now and then and when the tab regains focus, so a page whose person
 * signed out elsewhere leaves (and closes its live feeds) instead of staying open.
 */
export function useAccountStatus({ watch = false }: { watch?: boolean } = {}) {
  const trpc = useTRPC();
  const query = useQuery({ ...trpc.account.status.queryOptions(), ...(watch ? { refetchInterval: RECHECK_MS, refetchOnWindowFocus: true } : {}) });
  // Nothing known until the page has hydrated, as on the server (use-hydrated.ts): a part that
  // hydrates after the answer came must still render what the server rendered.
  const hydrated = useHydrated();
  return {
    data: hydrated ? query.data : undefined,
    error: hydrated ? query.error : null,
    refetch: query.refetch,
  };
}

/**
 * After signing in or up: every cached answer was for nobody, so all of them are fetched
 * again (awaited) before a page reads them.
 */
export function useRefreshAccount() {
  const queryClient = useQueryClient();
  return useCallback(() => queryClient.invalidateQueries(), [queryClient]);
}

/** Signing out ends this page's state too: a full load to the sign-in page drops every cache and feed. */
export function leaveToSignIn() {
  // A full load on purpose: nothing of the signed-out person's state may outlive the sign-out.
  // eslint-disable-next-line @next/next/no-location-assign-relative-destination
  window.location.assign("/sign-in");
}
