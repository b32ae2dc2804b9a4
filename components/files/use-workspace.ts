"use client";

import { keepPreviousData, useQuery, useQueryClient } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useState } from "react";
import type { FileEntry } from "../api-types";
import { useTRPC, useTRPCClient } from "../trpc";
import { applyFilesMessage } from "~/shared/files-delta";

// The Files view's reads. The listing is live (the workspace feed); a file's latest version and
// its history are keyed by `live`, the file's head version in that listing, so a change to
// another file costs this view nothing; a version is never rewritten, so a read of one is cached
// for good. Keys share the prefix ["workspace", teamId].

/**
 * Every live file, in path order, kept by the workspace's live feed: the listing once, then
 * only what each change changed; the SSE link resumes from the last change number.
 */
export function useLiveFiles(teamId: string): { files: FileEntry[] | null; error: string | null; retry: () => void } {
  const trpc = useTRPC();
  const [listing, setListing] = useState<{ files: FileEntry[]; lastChange: number } | null>(null);
  const sub = useSubscription(
    trpc.workspace.live.subscriptionOptions({ teamId, lastEventId: null }, { onData: ({ data }) => setListing((prev) => applyFilesMessage(prev, data)) }),
  );
  return { files: listing?.files ?? null, error: sub.error?.message ?? null, retry: sub.reset };
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
