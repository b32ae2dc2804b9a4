"use client";

import type { TeamState } from "../api-types";
import { PeoplePanel } from "../people/people-panel";
import { PresenceList } from "../people/presence-list";
import { Roster } from "./roster";

// The room's sidebar: the team's agents (status, cost), then the people present and the
// team's people. Wide windows show it beside the centre, medium ones in a drawer, phones as
// two screens of their own (Agents, People).

export interface SidebarProps {
  teamId: string;
  state: TeamState;
  selected: string;
  split: readonly string[];
  canAct: boolean;
  meId: string | null;
  onSelect: (name: string) => void;
  onToggleSplit: (name: string) => void;
}

export function AgentsSection({ teamId, state, selected, split, canAct, onSelect, onToggleSplit }: SidebarProps) {
  return (
    <Roster
      teamId={teamId}
      members={state.members}
      selected={selected}
      canAct={canAct}
      onSelect={onSelect}
      split={split}
      budgetReached={state.budget.reached}
      onToggleSplit={onToggleSplit}
    />
  );
}

export function PeopleSection({ teamId, state, meId }: SidebarProps) {
  return (
    <>
      <PresenceList presence={state.presence} members={state.members} meId={meId} />
      <PeoplePanel teamId={teamId} people={state.people} myRole={state.myRole} meId={meId} latestActionId={state.actions[0]?.id ?? null} />
    </>
  );
}

export function Sidebar(props: SidebarProps) {
  return (
    <>
      <AgentsSection {...props} />
      <PeopleSection {...props} />
    </>
  );
}
