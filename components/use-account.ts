"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback } from "react";
import { useTRPC } from "./trpc";

/** The instance (fresh? sign-up open?) and who is signed in: `me` is null when nobody is. */
export function useAccountStatus() {
  const trpc = useTRPC();
  return useQuery(trpc.account.status.queryOptions());
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
