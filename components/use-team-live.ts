"use client";

import { useSubscription } from "@trpc/tanstack-react-query";
import { useState } from "react";
import type { TeamState } from "./api-types";
import { useTRPC } from "./trpc";

/** The live team state (roster, board, mailbox); the SSE link resumes from the last id. */
export function useTeamLive(teamId: string) {
  const trpc = useTRPC();
  const [state, setState] = useState<TeamState | null>(null);
  const sub = useSubscription(
    trpc.team.live.subscriptionOptions({ teamId, lastEventId: null }, { onData: ({ data }) => setState(data) }),
  );
  return { state, connection: sub.status, error: sub.error };
}
