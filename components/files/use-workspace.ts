"use client";

import { keepPreviousData, useIsFetching, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { FileEntry } from "../api-types";
import { useTRPCClient } from "../trpc";
import { LIMITS } from "~/server/limits";

// The Files view's reads. What can change (the listing, a file's latest version, its history)
// is keyed by `live`, the workspace's change number the view has caught up with; a version is
// never rewritten, so a read of one is cached for good. Keys share the prefix
// ["workspace", teamId].

/**
 * The change number to read at: follows the team feed's `lastChange`, but only while no read
 * of this workspace is in flight, so a burst of changes costs one more round of reads, not one
 * per change.
 */
export function useLiveChange(teamId: string, lastChange: number): number {
  const [live, setLive] = useState(lastChange);
  const fetching = useIsFetching({ queryKey: ["workspace", teamId] }) > 0;
  // Adjusted while rendering (React's pattern for state that follows a prop): no extra commit.
  if (!fetching && live !== lastChange) setLive(lastChange);
  return live;
}

/** Every live file, in path order (all pages). */
export function useFileList(teamId: string, live: number) {
  const client = useTRPCClient();
  return useQuery({
    queryKey: ["workspace", teamId, "list", live],
    queryFn: async (): Promise<FileEntry[]> => {
      const files: FileEntry[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.workspace.list.query({ teamId, cursor, limit: LIMITS.workspaceListMax });
        files.push(...page.files);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return files;
    },
    // The tree stays while the next listing loads; old listings are not kept.
    placeholderData: keepPreviousData,
    gcTime: 10_000,
  });
}

/** A file at one version, or (version null) at its latest. */
export function useFileContent(teamId: string, path: string, version: number | null, live: number, enabled = true) {
  const client = useTRPCClient();
  return useQuery({
    enabled,
    queryKey: version === null ? ["workspace", teamId, "head", path, live] : ["workspace", teamId, "version", path, version],
    queryFn: () => client.workspace.read.query({ teamId, path, ...(version === null ? {} : { version }) }),
    placeholderData: version === null ? keepPreviousData : undefined,
    staleTime: version === null ? undefined : Infinity,
    gcTime: version === null ? 10_000 : undefined,
    retry: false,
  });
}

/** A file's versions, newest first (deletions included). */
export function useFileHistory(teamId: string, path: string, live: number) {
  const client = useTRPCClient();
  return useQuery({
    queryKey: ["workspace", teamId, "history", path, live],
    queryFn: () => client.workspace.history.query({ teamId, path }),
    placeholderData: keepPreviousData,
    gcTime: 10_000,
    retry: false,
  });
}

/** After the person's own change: read the listing, latest versions and histories again now. */
export function useRefreshWorkspace(teamId: string): () => Promise<void> {
  const queryClient = useQueryClient();
  return () =>
    queryClient.invalidateQueries({ predicate: (q) => q.queryKey[0] === "workspace" && q.queryKey[1] === teamId && q.queryKey[2] !== "version" });
}
