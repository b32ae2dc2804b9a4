"use client";

import { useSubscription } from "@trpc/tanstack-react-query";
import { useState } from "react";
import type { SessionLiveState, TranscriptEvent } from "./api-types";
import { mergeEvents } from "./transcript-model";
import { useTRPC } from "./trpc";

/**
 * The live session feed: every event in seq order plus the latest state. The SSE link resends
 * the last tracked id on reconnect, and mergeEvents drops any overlap, so nothing is doubled.
 */
export function useSessionLive(sessionId: string) {
  const trpc = useTRPC();
  const [events, setEvents] = useState<TranscriptEvent[]>([]);
  const [state, setState] = useState<SessionLiveState | null>(null);
  const sub = useSubscription(
    trpc.session.live.subscriptionOptions(
      { sessionId, lastEventId: null },
      {
        onData: ({ data }) => {
          if (data.type === "events") setEvents((prev) => mergeEvents(prev, data.events));
          else setState(data.state);
        },
      },
    ),
  );
  return { events, state, connection: sub.status, error: sub.error };
}
