"use client";

import { Link } from "../ui/link";
import type { ReactNode } from "react";
import { AgentPanel } from "./agent-panel";
import type { MemberView, PersonAction, TeamState } from "../api-types";
import { accessLost } from "../app-error";
import { FilesView } from "../files/files-view";
import { DEFAULT_VIEW, roomHref, toggleSplitHref, type RoomLocation } from "./room-url";
import { agentStatus } from "./agent-status";
import { StatusBadge } from "../status-badge";
import { Timeline, type TimelineFilters } from "./timeline";
import { Transcript } from "./transcript";
import type { StopRecord } from "./transcript-model";
import { useSessionLive } from "./use-session-live";
import { useModels } from "../models";
import { Alert } from "../ui/alert";

// The views of the room's centre, chosen by `?view=`. A view joins the room with one entry
// in ROOM_VIEWS: an id (its `view` value), the switcher's label, and what it renders.

export interface RoomViewProps {
  teamId: string;
  state: TeamState;
  location: RoomLocation;
  /** The agent view's member (the Lead when the address names none that exists). */
  selected: MemberView;
  canAct: boolean;
  timelineFilters: TimelineFilters;
  onTimelineFilters: (f: TimelineFilters) => void;
  /** Presence: a keystroke in a composer, and a prompt sent. */
  onTyping: (sessionId: string) => void;
  onSent: () => void;
}

export interface RoomView {
  id: string;
  label: string;
  render: (props: RoomViewProps) => ReactNode;
}

export const ROOM_VIEWS: readonly RoomView[] = [
  { id: DEFAULT_VIEW, label: "Agent", render: (p) => <AgentView {...p} /> },
  {
    id: "timeline",
    label: "Timeline",
    render: (p) => <Timeline teamId={p.teamId} members={p.state.members.map((m) => m.name)} location={p.location} filters={p.timelineFilters} onFilters={p.onTimelineFilters} />,
  },
  { id: "split", label: "Split", render: (p) => <SplitView {...p} /> },
  // Its address (`path`, `version`) is the Files view's own (files/links.ts).
  { id: "files", label: "Files", render: (p) => <FilesView teamId={p.teamId} canAct={p.canAct} workspace={p.state.workspace} /> },
];

/** The view an address names; the agent view for anything unknown. */
export function viewOf(id: string): RoomView {
  return ROOM_VIEWS.find((v) => v.id === id) ?? ROOM_VIEWS[0]!;
}

export function ViewSwitcher({ teamId, location, without }: { teamId: string; location: RoomLocation; without: string | null }) {
  const current = viewOf(location.view).id;
  return (
    <nav aria-label="Room view" className="view-tabs">
      {ROOM_VIEWS.filter((v) => v.id !== without).map((v) => (
        <Link key={v.id} href={roomHref(teamId, { ...location, view: v.id, seq: null })} aria-current={v.id === current ? "page" : undefined}>
          {v.label}
        </Link>
      ))}
    </nav>
  );
}

/** The selected agent: its transcript, and the prompt box pinned under it. */
function AgentView({ teamId, state, location, selected, canAct, onTyping, onSent }: RoomViewProps) {
  const { labelOf } = useModels();
  return (
    <AgentPanel
      key={selected.sessionId}
      teamId={teamId}
      sessionId={selected.sessionId}
      name={selected.name}
      canAct={canAct}
      onTyping={onTyping}
      onSent={onSent}
      stops={stopsOf(state.actions, selected.sessionId)}
      spend={selected.spend}
      model={labelOf(selected.model)}
      statusOf={(status) => agentStatus({ status, lastTurnEnd: selected.lastTurnEnd }, { budgetReached: state.budget.reached })}
      focusSeq={location.member === selected.name ? location.seq : null}
    />
  );
}

/** Two or more agents' transcripts side by side, each live; the roster's "split" boxes choose them. */
function SplitView({ teamId, state, location }: RoomViewProps) {
  const chosen = location.members.flatMap((name) => state.members.filter((m) => m.name === name));
  if (chosen.length === 0) {
    return <p className="muted split-hint">Tick “in the split view” beside two or more agents in the sidebar to watch their transcripts side by side.</p>;
  }
  return (
    <div className="split-view" role="group" aria-label="Split view">
      {chosen.map((m) => (
        <SplitColumn key={m.sessionId} teamId={teamId} member={m} location={location} stops={stopsOf(state.actions, m.sessionId)} budgetReached={state.budget.reached} />
      ))}
      {chosen.length === 1 && <p className="muted split-hint">Tick another agent in the sidebar to put it beside {chosen[0]!.name}.</p>}
    </div>
  );
}

function SplitColumn({
  teamId,
  member,
  location,
  stops,
  budgetReached,
}: {
  teamId: string;
  member: MemberView;
  location: RoomLocation;
  stops: StopRecord[];
  budgetReached: boolean;
}) {
  const live = useSessionLive(member.sessionId);
  const { state, error } = live;
  return (
    <section className="split-column" aria-label={`${member.name} in split view`}>
      <div className="panel-head">
        <h2>{member.name}</h2>
        <StatusBadge status={agentStatus({ status: state?.session.status ?? member.status, lastTurnEnd: member.lastTurnEnd }, { budgetReached })} />
        {live.reconnecting && (
          <span role="status" className="muted">
            Reconnecting…
          </span>
        )}
        <span className="spacer" />
        <Link href={roomHref(teamId, { ...location, view: DEFAULT_VIEW, member: member.name, seq: null })}>Open</Link>
        <Link href={toggleSplitHref(teamId, location, member.name)} aria-label={`Remove ${member.name} from the split view`}>
          Remove
        </Link>
      </div>
      {error && (
        <Alert>
          {accessLost(error) ? "You no longer have access to this team" : error.message}
        </Alert>
      )}
      <Transcript teamId={teamId} source={live} running={state?.session.running ?? false} stops={stops} />
    </section>
  );
}

/** The Stops people pressed on one agent that found a turn to stop (the record says `aborting`). */
function stopsOf(actions: readonly PersonAction[], sessionId: string): StopRecord[] {
  return actions
    .filter((a) => a.action === "stop" && a.sessionId === sessionId && a.detail.aborting === true)
    .map((a) => ({ name: a.userName, at: a.createdAt }));
}
