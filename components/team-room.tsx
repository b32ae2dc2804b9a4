"use client";

import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useState } from "react";
import { accessLost } from "./app-error";
import { BudgetBanner, BudgetBar } from "./budget";
import { Mailbox } from "./mailbox";
import { spendText } from "./models";
import { PeoplePanel } from "./people-panel";
import { PresenceBar } from "./presence-bar";
import { RecentActivity } from "./recent-activity";
import { DEFAULT_VIEW, LEAD, readRoomLocation, roomHref, toggleSplitHref } from "./room-url";
import { viewOf, ViewSwitcher } from "./room-views";
import { Roster } from "./roster";
import { StatusBadge } from "./status-badge";
import { TaskBoard } from "./task-board";
import { useAccountStatus } from "./use-account";
import { newClientId, usePresence } from "./use-presence";
import { useTeamLive } from "./use-team-live";
import { usePrefetchTranscript } from "./use-session-live";
import { ViewerHint } from "./viewer-hint";

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
  const { state, connection, error } = useTeamLive(teamId, clientId);
  // The Lead's session id is the team's: its transcript can be read while the team feed opens.
  usePrefetchTranscript(location.view === DEFAULT_VIEW && location.member === LEAD ? teamId : null);
  const members = state?.members ?? [];
  const lead = members[0];
  const selected = members.find((m) => m.name === location.member) ?? lead;
  const gone = accessLost(error);
  const presence = usePresence({ teamId, clientId, watching: selected?.sessionId ?? null, live: connection === "pending" && !gone });

  if (gone) return <NoAccess />;
  const canAct = state ? state.myRole !== "viewer" : false;

  return (
    <main className="room-grid">
      <header className="room-head">
        <h1>{lead?.description ?? "Team"}</h1>
        {lead && <StatusBadge status={lead.status} />}
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
        {state && <PresenceBar presence={state.presence} members={members} meId={meId} />}
      </header>
      {state && <BudgetBanner budget={state.budget} canAct={canAct} />}
      {error && (
        <p role="alert" className="error">
          {error.message}
        </p>
      )}
      {!state && !error && <p className="muted">Loading the team…</p>}
      {state && selected && (
        <>
          <div className="room-left">
            <Roster
              teamId={teamId}
              members={members}
              selected={selected.name}
              canAct={canAct}
              onSelect={(name) => router.replace(roomHref(teamId, { ...location, view: "agent", member: name, seq: null }))}
              split={location.members}
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
          <aside className="side">
            {!canAct && <ViewerHint />}
            <TaskBoard teamId={teamId} tasks={state.tasks} members={members} canAct={canAct} />
            <Mailbox messages={state.messages} />
            <RecentActivity actions={state.actions} members={members} people={state.people} />
          </aside>
        </>
      )}
    </main>
  );
}

/** Removed from the team, or signed out elsewhere: the feeds refuse, and reconnecting would not help. */
function NoAccess() {
  return (
    <main className="page">
      <section role="alert" aria-labelledby="no-access">
        <h1 id="no-access">You no longer have access to this team</h1>
        <p className="muted">You were removed from it, you left it, or you are signed out. An owner can invite you again.</p>
        <p>
          <Link href="/">Back to your teams</Link>
        </p>
      </section>
    </main>
  );
}

