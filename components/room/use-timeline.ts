"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useState } from "react";
import type { TimelineEntry, TimelineFilter } from "../api-types";
import { mergeEntries } from "./timeline-model";
import { useTRPC } from "../trpc";

interface Held {
  /** The filter the entries were read with: a new filter starts over from its newest page. */
  key: string;
  entries: TimelineEntry[];
  earlier: string | null;
}

/**
 * The team's timeline, live: the feed opens with the newest page and sends what commits (the
 * SSE link resumes from the last id after a reconnect); earlier pages load on demand.
 */
export function useTimeline(teamId: string, filter: TimelineFilter) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const key = JSON.stringify(filter);
  const [held, setHeld] = useState<Held | null>(null);
  const sub = useSubscription(
    trpc.timeline.live.subscriptionOptions(
      { teamId, lastEventId: null, ...filter },
      {
        onData: ({ data }) => {
          if (data.type === "page") setHeld({ key, entries: data.entries, earlier: data.earlier });
          else setHeld((h) => (h && h.key === key ? { ...h, entries: mergeEntries(h.entries, data.entries) } : h));
        },
      },
    ),
  );
  const earlier = useMutation({
    mutationFn: (before: string) => queryClient.fetchQuery(trpc.timeline.page.queryOptions({ teamId, before, ...filter })),
    onSuccess: (page, before) =>
      setHeld((h) => (h && h.key === key && h.earlier === before ? { ...h, entries: mergeEntries(h.entries, page.entries), earlier: page.earlier } : h)),
  });
  const current = held?.key === key ? held : null;
  return {
    /** Null until the newest page for this filter arrived. */
    entries: current?.entries ?? null,
    hasEarlier: !!current?.earlier,
    loadEarlier: () => current?.earlier && earlier.mutate(current.earlier),
    loadingEarlier: earlier.isPending,
    failure: earlier.error,
    connection: sub.status,
    error: sub.error,
  };
}
