"use client";

import { useRouter, useSearchParams } from "next/navigation";
import { AgentPanel } from "./agent-panel";
import { Mailbox } from "./mailbox";
import { Roster } from "./roster";
import { StatusBadge } from "./status-badge";
import { TaskBoard } from "./task-board";
import { useTeamLive } from "./use-team-live";

/** The team room: roster, the selected agent's transcript and composer, board and mailbox. */
export function TeamRoom({ teamId }: { teamId: string }) {
  const router = useRouter();
  const params = useSearchParams();
  const { state, connection, error } = useTeamLive(teamId);
  const members = state?.members ?? [];
  const lead = members[0];
  const selectedName = params.get("member") ?? "lead";
  const selected = members.find((m) => m.name === selectedName) ?? lead;

  return (
    <main className="room-grid">
      <header className="room-head">
        <h1>{lead?.description ?? "Team"}</h1>
        {lead && <StatusBadge status={lead.status} />}
        {connection === "connecting" && state && (
          <span role="status" className="muted">
            Reconnecting…
          </span>
        )}
      </header>
      {error && (
        <p role="alert" className="error">
          {error.message}
        </p>
      )}
      {!state && !error && <p className="muted">Loading the team…</p>}
      {state && selected && (
        <>
          <Roster
            teamId={teamId}
            members={members}
            selected={selected.name}
            onSelect={(name) => router.replace(`/teams/${teamId}${name === "lead" ? "" : `?member=${encodeURIComponent(name)}`}`)}
          />
          <AgentPanel key={selected.sessionId} sessionId={selected.sessionId} name={selected.name} />
          <aside className="side">
            <TaskBoard teamId={teamId} tasks={state.tasks} members={members} />
            <Mailbox messages={state.messages} />
          </aside>
        </>
      )}
    </main>
  );
}
