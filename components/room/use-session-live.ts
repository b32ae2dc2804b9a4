"use client";

import { skipToken, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useEffect, useState } from "react";
import type { SessionLiveState, TranscriptEvent } from "../api-types";
import { accessLost, retryDelayMs } from "../app-error";
import { fromNewestPage, withEarlierPage, withLive, type LoadedTranscript } from "./transcript-pages";
import { useTRPC } from "../trpc";

/** Events in the page a transcript opens with (a screenful and more), and in each earlier page read on demand. */
const PAGE_EVENTS = 200;
/** Events per page when reading back to a linked moment (the most `session.transcript` returns). */
const CATCH_UP_EVENTS = 1000;

/**
 * The newest page, read once per mount (the feed carries everything after it; a page kept from
 * a moment ago is as good, the feed resumes from its last seq) and retried while the server is away.
 */
function newestPage(trpc: ReturnType<typeof useTRPC>, sessionId: string) {
  return {
    ...trpc.session.transcript.queryOptions({ sessionId, limit: PAGE_EVENTS }),
    staleTime: Infinity,
    gcTime: 30_000,
    retry: (_: number, error: Parameters<typeof accessLost>[0]) => !accessLost(error),
    retryDelay: retryDelayMs,
  };
}

/** Starts reading a transcript's newest page before its panel mounts (beside the team feed, not after it). */
export function usePrefetchTranscript(sessionId: string | null) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  useEffect(() => {
    if (sessionId) void queryClient.prefetchQuery(newestPage(trpc, sessionId));
  }, [queryClient, trpc, sessionId]);
}

/**
 * One session's transcript and state, live. It opens from the end of the log: the newest page
 * (`session.transcript`), then the live feed from that page's last seq (the SSE link resends
 * the last tracked id on reconnect, and the fold drops any overlap); earlier pages load on
 * demand, or until a linked moment is in (`loadEarlier(throughSeq)`).
 */
export function useSessionLive(sessionId: string) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const newest = useQuery(newestPage(trpc, sessionId));
  const [held, setHeld] = useState<{ sessionId: string; t: LoadedTranscript } | null>(null);
  const [state, setState] = useState<SessionLiveState | null>(null);
  if (newest.data && held?.sessionId !== sessionId) setHeld({ sessionId, t: fromNewestPage(newest.data) });
  const transcript = held?.sessionId === sessionId ? held.t : null;

  const sub = useSubscription(
    trpc.session.live.subscriptionOptions(
      transcript ? { sessionId, lastEventId: transcript.liveFrom === 0 ? null : String(transcript.liveFrom) } : skipToken,
      {
        onData: ({ data }) => {
          if (data.type === "events") setHeld((h) => (h?.sessionId === sessionId ? { sessionId, t: withLive(h.t, data.events) } : h));
          else setState(data.state);
        },
      },
    ),
  );

  const earlier = useMutation({
    mutationFn: async ({ beforeSeq, throughSeq }: { beforeSeq: number; throughSeq: number | null }) => {
      const pages: TranscriptEvent[][] = [];
      let before = beforeSeq;
      let hasMore = true;
      do {
        const page = await queryClient.fetchQuery(
          trpc.session.transcript.queryOptions({ sessionId, beforeSeq: before, limit: throughSeq === null ? PAGE_EVENTS : CATCH_UP_EVENTS }),
        );
        pages.unshift(page.events);
        hasMore = page.hasMore;
        before = page.events[0]?.seq ?? 1;
      } while (hasMore && throughSeq !== null && before > throughSeq);
      return { events: pages.flat(), hasMore, beforeSeq };
    },
    // Only onto what it was read for (a page read twice is dropped).
    onSuccess: (page) => setHeld((h) => (h?.sessionId === sessionId && h.t.fold.firstSeq === page.beforeSeq ? { sessionId, t: withEarlierPage(h.t, page) } : h)),
  });

  return {
    /** Null until the newest page is in. */
    transcript,
    state,
    /** Reads the page before the first event held; with `throughSeq`, pages until that event is held. */
    loadEarlier: (throughSeq: number | null = null) => {
      if (transcript?.hasEarlier && !earlier.isPending) earlier.mutate({ beforeSeq: transcript.fold.firstSeq, throughSeq });
    },
    loadingEarlier: earlier.isPending,
    earlierError: earlier.error,
    connection: sub.status,
    /** The feed was up (its first message came) and is connecting again. */
    reconnecting: sub.status === "connecting" && state !== null,
    error: newest.error ?? sub.error,
  };
}
