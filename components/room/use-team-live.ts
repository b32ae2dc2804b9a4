"use client";

import { useSubscription } from "@trpc/tanstack-react-query";
import { useState } from "react";
import { applyTeamMessage } from "~/shared/team-delta";
import type { TeamState } from "../api-types";
import { useTRPC } from "../trpc";

/**
 * The live team state (roster, board, mailbox, people, presence): the whole state first, then
 * patches of what changed, applied in order; the SSE link resumes from the last id (the server
 * sends the changes since, or the whole state again). `clientId` names this tab: its presence
 * leaves the room when the feed closes.
 */
export function useTeamLive(teamId: string, clientId: string) {
  const trpc = useTRPC();
  const [state, setState] = useState<TeamState | null>(null);
  const sub = useSubscription(
    trpc.team.live.subscriptionOptions({ teamId, lastEventId: null, clientId }, { onData: ({ data }) => setState((prev) => applyTeamMessage(prev, data)) }),
  );
  return { state, connection: sub.status, error: sub.error };
}
