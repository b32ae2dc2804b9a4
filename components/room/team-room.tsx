"use client";

import { Link } from "../ui/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { flushSync } from "react-dom";
import { accessLost } from "../app-error";
import { BudgetBanner, BudgetBar } from "../control/budget";
import { spendText } from "../models";
import { DEFAULT_VIEW, LEAD, readRoomLocation, roomHref, toggleSplitHref, type RoomLocation } from "./room-url";
import { viewOf, ViewSwitcher } from "./room-views";
import { agentStatus } from "./agent-status";
import { StatusBadge } from "../status-badge";
import { SidePanel, type PanelTab } from "./side-panel";
import { useAccountStatus } from "../account/use-account";
import { EditingContext, newClientId, usePresence } from "../people/use-presence";
import { filesTarget } from "../files/links";
import type { PresenceWhere } from "~/server/team/presence";
import { useTeamLive } from "./use-team-live";
import { usePrefetchTranscript } from "./use-session-live";
import { RoomCommands } from "./room-commands";
import { SkipLinks } from "../skip-links";
import { ViewerHint } from "../viewer-hint";
import { PlanApproval } from "../control/plan-approval";
import { WaitingRequests } from "../control/waiting-requests";
import { NO_FILTERS, type TimelineFilters } from "./timeline";
import { useTRPC } from "../trpc";
import { ConfirmButton } from "../ui/confirm-button";
import { Drawer } from "../ui/drawer";
import { useLayoutPrefs, useRoomWidth } from "./room-layout";
import { AgentsSection, PeopleSection, Sidebar, type SidebarProps } from "./room-sidebar";
import { currentItem, RoomSwitcher, type PhoneScreen, type SwitcherItem } from "./room-switcher";
import { Button } from "../ui/button";
import { ErrorAlert } from "../ui/alert";

/**
 * The team room (room-layout.ts gives its shape): the sidebar (agents, people), in the centre a
 * view (room-views.tsx: an agent, the timeline, transcripts side by side, the files), and the
 * team panel's tabs. A viewer sees it all live and gets no controls that act.
 */
export function TeamRoom({ teamId }: { teamId: string }) {
  const router = useRouter();
  const params = useSearchParams();
  const meId = useAccountStatus().data?.me?.id ?? null;
  const location = readRoomLocation(params);
  // One id per tab (per mounted room): the server keeps one presence row for it.
  const [clientId] = useState(newClientId);
  const [panel, setPanel] = useState<PanelTab>("tasks");
  const width = useRoomWidth();
  const [prefs, setPrefs] = useLayoutPrefs();
  const [drawer, setDrawer] = useState(false);
  const [screen, setScreen] = useState<PhoneScreen>("centre");
  const [timelineFilters, setTimelineFilters] = useState<TimelineFilters>(NO_FILTERS);
  // A new address (an agent picked, a view chosen, a link followed) shows the centre on a phone.
  const address = params.toString();
  const [lastAddress, setLastAddress] = useState(address);
  if (address !== lastAddress) {
    setLastAddress(address);
    setScreen("centre");
  }
  const { state, connection, error } = useTeamLive(teamId, clientId);
  // The Lead's session id is the team's: its transcript can be read while the team feed opens.
  usePrefetchTranscript(location.view === DEFAULT_VIEW && location.member === LEAD ? teamId : null);
  const members = state?.members ?? [];
  const lead = members[0];
  const selected = members.find((m) => m.name === location.member) ?? lead;
  const gone = accessLost(error);
  const presence = usePresence({
    teamId,
    clientId,
    watching: selected?.sessionId ?? null,
    place: width === "phone" && screen === "tasks" ? "board" : placeOf(location.view),
    file: filesTarget(params).path,
    live: connection === "pending" && !gone,
  });

  if (gone) return <NoAccess wasIn={state !== null} />;
  const canAct = state ? state.myRole !== "viewer" : false;
  const go = (loc: Partial<RoomLocation>) => router.replace(roomHref(teamId, { ...location, seq: null, ...loc }));
  const showPanel = (tab: PanelTab) => {
    setPanel(tab);
    setScreen("tasks");
    if (prefs.panel === "hidden") setPrefs({ panel: "normal" });
  };
  // The centre on a phone before focus moves into it (skip links, `/`).
  const showCentre = () => flushSync(() => setScreen("centre"));
  const pick = (item: SwitcherItem) => {
    if (item === "Agents") return setScreen("agents");
    if (item === "People") return setScreen("people");
    if (item === "Tasks") return showPanel("tasks");
    setScreen("centre");
    if (item === "Files" && location.view !== "files") go({ view: "files" });
    if (item === "Transcript" && location.view === "files") go({ view: DEFAULT_VIEW });
  };

  const phone = width === "phone";
  const sidebarShown = width === "wide" && prefs.sidebar === "shown";
  const panelShown = phone ? screen === "tasks" : prefs.panel !== "hidden";
  const sidebar: SidebarProps | null =
    state && selected
      ? {
          teamId,
          state,
          selected: selected.name,
          split: location.members,
          canAct,
          meId,
          onSelect: (name) => {
            setDrawer(false);
            go({ view: DEFAULT_VIEW, member: name });
          },
          onToggleSplit: (name) => router.replace(toggleSplitHref(teamId, location, name)),
        }
      : null;
  const budget = state && <BudgetBar teamId={teamId} budget={state.budget} canAct={canAct} members={members} />;

  return (
    <EditingContext value={presence.setEditing}>
      <main className="room" data-width={width}>
        <SkipLinks canAct={canAct} onBeforeSkip={showCentre} />
        <header className="room-head">
          <h1 title={lead?.description}>{lead?.description ?? "Team"}</h1>
          {lead && <StatusBadge status={agentStatus(lead, { budgetReached: state?.budget.reached })} />}
          {state && <span className="muted team-spend">team: {spendText(state.spend)}</span>}
          {state && !phone && (
            <span className={`badge badge-role-${state.myRole}`} aria-label={`your role: ${state.myRole}`}>
              you: {state.myRole}
            </span>
          )}
          {connection === "connecting" && state && (
            <span role="status" className="muted">
              Reconnecting…
            </span>
          )}
          {!phone && budget}
          {canAct && <StopTeam teamId={teamId} working={members.filter((m) => STOPPABLE.has(m.status)).map((m) => m.name)} />}
        </header>
        {phone && state && <RoomSwitcher current={currentItem(screen, location.view)} onPick={pick} />}
        {state && <BudgetBanner budget={state.budget} canAct={canAct} />}
        {state && <WaitingRequests teamId={teamId} waiting={state.waiting} canAct={canAct} isOwner={state.myRole === "owner"} />}
        {state && <PlanApproval teamId={teamId} boardKey={state.tasks} actionKey={state.actions[0]?.id ?? null} canAct={canAct} />}
        <ErrorAlert error={error} />
        <div className="room-body" data-sidebar={sidebarShown ? "shown" : "hidden"} data-panel={phone || !panelShown ? "hidden" : prefs.panel}>
          {!state && !error && <RoomSkeleton />}
          {state && selected && sidebar && (
            <>
              <RoomCommands teamId={teamId} state={state} location={location} panel={panel} onPanel={showPanel} onCentre={showCentre} />
              {sidebarShown && (
                <div className="room-left" id="room-sidebar">
                  <Sidebar {...sidebar} />
                </div>
              )}
              {phone && screen === "agents" && (
                <div className="room-left">
                  {budget}
                  <AgentsSection {...sidebar} />
                </div>
              )}
              {phone && screen === "people" && (
                <div className="room-left">
                  <PeopleSection {...sidebar} />
                </div>
              )}
              {(!phone || screen === "centre") && (
                <div className="room-centre">
                  <div className="centre-bar">
                    {width === "wide" && (
                      <Button variant="secondary" size="small" aria-expanded={sidebarShown} onClick={() => setPrefs({ sidebar: sidebarShown ? "hidden" : "shown" })}>
                        Sidebar
                      </Button>
                    )}
                    {width === "medium" && (
                      <Drawer
                        open={drawer}
                        onOpenChange={setDrawer}
                        title="Agents and people"
                        trigger={
                          <Button variant="secondary" size="small">
                            Agents and people
                          </Button>
                        }
                      >
                        <Sidebar {...sidebar} />
                      </Drawer>
                    )}
                    {/* A phone's switcher has its own Files. */}
                    <ViewSwitcher teamId={teamId} location={location} without={phone ? "files" : null} />
                    {!phone && (
                      <>
                        <span className="spacer" />
                        <Button variant="secondary" size="small" aria-expanded={panelShown} onClick={() => setPrefs({ panel: panelShown ? "hidden" : "normal" })}>
                          Panel
                        </Button>
                        {panelShown && (
                          <Button
                           
                            variant="secondary" size="small"
                            aria-pressed={prefs.panel === "wide"}
                            onClick={() => setPrefs({ panel: prefs.panel === "wide" ? "normal" : "wide" })}
                          >
                            Wider panel
                          </Button>
                        )}
                      </>
                    )}
                  </div>
                  {viewOf(location.view).render({
                    teamId,
                    state,
                    location,
                    selected,
                    canAct,
                    timelineFilters,
                    onTimelineFilters: setTimelineFilters,
                    onTyping: presence.typed,
                    onSent: presence.stoppedTyping,
                  })}
                </div>
              )}
              {panelShown && (
                <aside className="side" aria-label="Team panel">
                  {!canAct && <ViewerHint />}
                  <SidePanel
                    teamId={teamId}
                    state={state}
                    canAct={canAct}
                    tab={panel}
                    onTab={setPanel}
                  />
                </aside>
              )}
            </>
          )}
        </div>
      </main>
    </EditingContext>
  );
}

/** Presence's name for a centre view (an unknown one shows the agent view). */
function placeOf(view: string): PresenceWhere["place"] {
  const id = viewOf(view).id;
  return id === "timeline" || id === "split" || id === "files" ? id : "agent";
}

/** Members with an open turn: working, or waiting for people (a stop cancels what they wait for). */
const STOPPABLE: ReadonlySet<string> = new Set(["running", "waiting_approval", "waiting_answer"]);

/** The room's shape before anything is known (the account, the team): the first paint. */
export function RoomLoading() {
  return (
    <main className="room">
      <header className="room-head" aria-hidden="true">
        <div className="skeleton skeleton-title" />
      </header>
      <div className="room-body" data-sidebar="shown" data-panel="normal">
        <RoomSkeleton />
      </div>
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
    <span className="room-head-end">
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
    </span>
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
