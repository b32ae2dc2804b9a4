"use client";

import { useEffect } from "react";

/**
 * Reads a query again whenever `key` moves: a change the team feed announced (someone acted,
 * the workspace changed) that the query's answer may reflect.
 */
export function useRefetchOn(refetch: () => unknown, key: unknown): void {
  useEffect(() => {
    void refetch();
  }, [key, refetch]);
}
