"use client";

import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { accessLost } from "./app-error";
import { BudgetBanner, BudgetBar } from "./budget";
import { spendText } from "./models";
import { PeoplePanel } from "./people-panel";
import { PresenceBar } from "./presence-bar";
import { DEFAULT_VIEW, LEAD, readRoomLocation, roomHref, toggleSplitHref } from "./room-url";
import { viewOf, ViewSwitcher } from "./room-views";
import { Roster } from "./roster";
import { agentStatus } from "./agent-status";
import { StatusBadge } from "./status-badge";
import { SidePanel, type PanelTab } from "./side-panel";
import { useAccountStatus } from "./use-account";
import { newClientId, usePresence } from "./use-presence";
import { useTeamLive } from "./use-team-live";
import { usePrefetchTranscript } from "./use-session-live";
import { RoomCommands } from "./room-commands";
import { SkipLinks } from "./skip-links";
import { ViewerHint } from "./viewer-hint";
import { useTRPC } from "./trpc";
import { ConfirmButton } from "./ui/confirm-button";

/**
 * The team room: roster and people; in the centre a view (room-views.tsx: the selected agent
 * with the team's timeline, or several transcripts side by side); board, mailbox and recent
 * activity; and who is in the room. A viewer sees it all live and gets no controls that act.
 */
export function TeamRoom({ teamId }: { teamId: string }) {
  const router = useRouter();
  const params = useSearchParams();
  const meId = useAccountStatus().data?.me?.id ?? null;
  const location = readRoomLocation(params);
  // One id per tab (per mounted room): the server keeps one presence row for it.
  const [clientId] = useState(newClientId);
  const [panel, setPanel] = useState<PanelTab>("tasks");
  const { state, connection, error } = useTeamLive(teamId, clientId);
  // The Lead's session id is the team's: its transcript can be read while the team feed opens.
  usePrefetchTranscript(location.view === DEFAULT_VIEW && location.member === LEAD ? teamId : null);
  const members = state?.members ?? [];
  const lead = members[0];
  const selected = members.find((m) => m.name === location.member) ?? lead;
  const gone = accessLost(error);
  const presence = usePresence({ teamId, clientId, watching: selected?.sessionId ?? null, live: connection === "pending" && !gone });

  if (gone) return <NoAccess wasIn={state !== null} />;
  const canAct = state ? state.myRole !== "viewer" : false;

  return (
    <main className="room-grid">
      <SkipLinks canAct={canAct} />
      <header className="room-head">
        <h1>{lead?.description ?? "Team"}</h1>
        {lead && <StatusBadge status={agentStatus(lead, { budgetReached: state?.budget.reached })} />}
        {state && <span className="muted team-spend">team: {spendText(state.spend)}</span>}
        {state && (
          <span className={`badge badge-role-${state.myRole}`} aria-label={`your role: ${state.myRole}`}>
            you: {state.myRole}
          </span>
        )}
        {connection === "connecting" && state && (
          <span role="status" className="muted">
            Reconnecting…
          </span>
        )}
        {state && <BudgetBar teamId={teamId} budget={state.budget} canAct={canAct} members={members} />}
        {canAct && <StopTeam teamId={teamId} working={members.filter((m) => m.status === "running").map((m) => m.name)} />}
        {state && <PresenceBar presence={state.presence} members={members} meId={meId} />}
      </header>
      {state && <BudgetBanner budget={state.budget} canAct={canAct} />}
      {error && (
        <p role="alert" className="error">
          {error.message}
        </p>
      )}
      {!state && !error && <RoomSkeleton />}
      {state && selected && (
        <>
          <RoomCommands teamId={teamId} state={state} location={location} panel={panel} onPanel={setPanel} />
          <div className="room-left">
            <Roster
              teamId={teamId}
              members={members}
              selected={selected.name}
              canAct={canAct}
              onSelect={(name) => router.replace(roomHref(teamId, { ...location, view: "agent", member: name, seq: null }))}
              split={location.members}
              budgetReached={state.budget.reached}
              onToggleSplit={(name) => router.replace(toggleSplitHref(teamId, location, name))}
            />
            <PeoplePanel teamId={teamId} people={state.people} myRole={state.myRole} meId={meId} latestActionId={state.actions[0]?.id ?? null} />
          </div>
          <div className="room-centre">
            <ViewSwitcher teamId={teamId} location={location} />
            {viewOf(location.view).render({
              teamId,
              state,
              location,
              selected,
              canAct,
              onTyping: presence.typed,
              onSent: presence.stoppedTyping,
            })}
          </div>
          <aside className="side" aria-label="Team panel">
            {!canAct && <ViewerHint />}
            <SidePanel teamId={teamId} state={state} canAct={canAct} tab={panel} onTab={setPanel} />
          </aside>
        </>
      )}
    </main>
  );
}

/** The room's shape at once while the team's state loads, so the page is never blank. */
function RoomSkeleton() {
  return (
    <>
      <p role="status" className="sr-only">
        Loading the team…
      </p>
      {["room-left", "room-centre", "side"].map((area) => (
        <div key={area} className={`${area} skeleton-area`} aria-hidden="true">
          <div className="skeleton skeleton-title" />
          <div className="skeleton skeleton-block" />
          <div className="skeleton skeleton-block" />
        </div>
      ))}
    </>
  );
}

/** One action stops every working member (team.stop); it asks first, naming who is working. */
function StopTeam({ teamId, working }: { teamId: string; working: string[] }) {
  const trpc = useTRPC();
  const stop = useMutation(trpc.team.stop.mutationOptions());
  return (
    <>
      <ConfirmButton
        title="Stop the whole team?"
        description={`${working.length === 1 ? "1 agent is" : `${working.length} agents are`} working (${working.join(", ")}): their turns end now. Queued prompts and team messages are kept, and nothing runs again until someone sends a prompt.`}
        confirm="Stop the team"
        onConfirm={() => stop.mutate({ teamId })}
        disabled={working.length === 0 || stop.isPending}
      >
        Stop the team
      </ConfirmButton>
      {stop.error && (
        <span role="alert" className="error">
          {stop.error.message}
        </span>
      )}
    </>
  );
}

/**
 * The feeds refuse, and reconnecting would not help: removed from the team or signed out
 * elsewhere (`wasIn`), or a team that does not exist or was never theirs (the two read alike:
 * nothing says which).
 */
function NoAccess({ wasIn }: { wasIn: boolean }) {
  return (
    <main className="page">
      <section role="alert" aria-labelledby="no-access">
        <h1 id="no-access">{wasIn ? "You no longer have access to this team" : "This team does not exist or you do not have access"}</h1>
        <p className="muted">
          {wasIn
            ? "You were removed from it, you left it, or you are signed out. An owner can invite you again."
            : "Check the link, or ask one of the team's owners for an invite."}
        </p>
        <p>
          <Link href="/">Back to your teams</Link>
        </p>
      </section>
    </main>
  );
}

