"use client";

import { useSubscription } from "@trpc/tanstack-react-query";
import { useState } from "react";
import type { SessionEvent } from "~/server/runtime/events";
import type { LiveMessage } from "~/server/trpc/routers/session";
import { mergeEvents } from "./transcript-model";
import { useTRPC } from "./trpc";

type LiveState = Extract<LiveMessage, { type: "state" }>["state"];

/**
 * The live session feed: every event in seq order plus the latest state. The SSE link resends
 * the last tracked id on reconnect, and mergeEvents drops any overlap, so nothing is doubled.
 */
export function useSessionLive(sessionId: string) {
  const trpc = useTRPC();
  const [events, setEvents] = useState<SessionEvent[]>([]);
  const [state, setState] = useState<LiveState | null>(null);
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
