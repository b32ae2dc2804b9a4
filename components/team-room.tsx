"use client";

import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useState } from "react";
import { AgentPanel } from "./agent-panel";
import { accessLost } from "./app-error";
import { FilesView } from "./files/files-view";
import { filesHref } from "./files/links";
import { Mailbox } from "./mailbox";
import { PeoplePanel } from "./people-panel";
import { PresenceBar } from "./presence-bar";
import { RecentActivity } from "./recent-activity";
import { Roster } from "./roster";
import { StatusBadge } from "./status-badge";
import { TaskBoard } from "./task-board";
import { useAccountStatus } from "./use-account";
import { newClientId, usePresence } from "./use-presence";
import { useTeamLive } from "./use-team-live";
import { ViewerHint } from "./viewer-hint";
import type { PersonAction } from "./api-types";
import type { StopRecord } from "./transcript-model";

/**
 * The team room: roster and people, the selected agent's transcript and composer, board,
 * mailbox and recent activity, with who is in the room. A viewer sees it all live and gets no
 * controls that act.
 */
export function TeamRoom({ teamId }: { teamId: string }) {
  const router = useRouter();
  const params = useSearchParams();
  const meId = useAccountStatus().data?.me?.id ?? null;
  // One id per tab (per mounted room): the server keeps one presence row for it.
  const [clientId] = useState(newClientId);
  const { state, connection, error } = useTeamLive(teamId, clientId);
  const members = state?.members ?? [];
  const lead = members[0];
  const selectedName = params.get("member") ?? "lead";
  const selected = members.find((m) => m.name === selectedName) ?? lead;
  // The centre column: the selected agent, or the team's files (`?view=files`, files/links.ts).
  const view = params.get("view") === "files" ? "files" : "agent";
  const gone = accessLost(error);
  const presence = usePresence({ teamId, clientId, watching: selected?.sessionId ?? null, live: connection === "pending" && !gone });

  if (gone) return <NoAccess />;
  const canAct = state ? state.myRole !== "viewer" : false;

  return (
    <main className="room-grid">
      <header className="room-head">
        <h1>{lead?.description ?? "Team"}</h1>
        {lead && <StatusBadge status={lead.status} />}
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
        {state && <PresenceBar presence={state.presence} members={members} meId={meId} />}
      </header>
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
              onSelect={(name) => router.replace(`/teams/${teamId}${name === "lead" ? "" : `?member=${encodeURIComponent(name)}`}`)}
            />
            <PeoplePanel teamId={teamId} people={state.people} myRole={state.myRole} meId={meId} latestActionId={state.actions[0]?.id ?? null} />
          </div>
          <div className="room-centre">
            <nav aria-label="Room view" className="view-tabs">
              <Link href={`/teams/${teamId}${selected.name === "lead" ? "" : `?member=${encodeURIComponent(selected.name)}`}`} aria-current={view === "agent" ? "page" : undefined}>
                Agent
              </Link>
              <Link href={filesHref(teamId)} aria-current={view === "files" ? "page" : undefined}>
                Files
              </Link>
            </nav>
            {view === "files" ? (
              <FilesView teamId={teamId} canAct={canAct} workspace={state.workspace} />
            ) : (
              <AgentPanel
                key={selected.sessionId}
                teamId={teamId}
                sessionId={selected.sessionId}
                name={selected.name}
                canAct={canAct}
                onTyping={presence.typed}
                onSent={presence.stoppedTyping}
                stops={stopsOf(state.actions, selected.sessionId)}
              />
            )}
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

/** The Stops people pressed on one agent that found a turn to stop (the record says `aborting`). */
function stopsOf(actions: readonly PersonAction[], sessionId: string): StopRecord[] {
  return actions
    .filter((a) => a.action === "stop" && a.sessionId === sessionId && a.detail.aborting === true)
    .map((a) => ({ name: a.userName, at: a.createdAt }));
}
