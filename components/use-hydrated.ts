"use client";

import { useSyncExternalStore } from "react";

const never = () => () => undefined;

/**
 * False while the page hydrates (and on the server), true after. A part of the page inside a
 * Suspense boundary may hydrate after a query answered (the account check the top bar started):
 * it must still render what the server rendered, or React throws the server's HTML away
 * (error #418). Components that read query data at their first render use this.
 */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    never,
    () => true,
    () => false,
  );
}
