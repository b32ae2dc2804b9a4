"use client";

import { Skeleton } from "../ui/skeleton";
import { InlineError } from "../ui/alert";
import { Link } from "../ui/link";
import { Tabs } from "radix-ui";
import type { TeamState } from "../api-types";
import { filesHref } from "../files/links";
import { Mailbox } from "./mailbox";
import { RecentActivity } from "./recent-activity";
import { TaskBoard } from "./task-board";
import { ToolPolicy } from "../control/tool-policy";
import { McpServers } from "../control/mcp-servers";
import { Webhooks } from "../control/webhooks";
import { useLiveFiles } from "../files/use-workspace";
import { MemoryPanel } from "../memory/memory-panel";
import { RoutinesPanel } from "../routines/routines-panel";

// The room's right panel: one tab at a time (Radix Tabs) of Tasks, Mailbox, Files, Memory,
// Routines, Activity and the team's Tools (its policy), each with its count. Files lists the workspace; a file opens in the centre's Files view.

export const PANEL_TABS = ["tasks", "mailbox", "files", "memory", "routines", "activity", "tools"] as const;
export type PanelTab = (typeof PANEL_TABS)[number];

export function SidePanel({
  teamId,
  state,
  canAct,
  tab,
  onTab,
}: {
  teamId: string;
  state: TeamState;
  canAct: boolean;
  tab: PanelTab;
  onTab: (tab: PanelTab) => void;
}) {
  const open = state.tasks.filter((t) => t.status !== "deleted" && t.status !== "completed").length;
  const unread = state.messages.filter((m) => m.state !== "consumed").length;
  return (
    <Tabs.Root className="panel-tabs" value={tab} onValueChange={(v) => onTab(PANEL_TABS.find((t) => t === v) ?? "tasks")}>
      <Tabs.List className="tab-list" aria-label="Team panel">
        <Tabs.Trigger value="tasks">Tasks{open > 0 ? ` (${open})` : ""}</Tabs.Trigger>
        <Tabs.Trigger value="mailbox">Mailbox{unread > 0 ? ` (${unread})` : ""}</Tabs.Trigger>
        <Tabs.Trigger value="files">Files ({state.workspace.files})</Tabs.Trigger>
        <Tabs.Trigger value="memory">Memory{state.memory.proposed > 0 ? ` (${state.memory.proposed})` : ""}</Tabs.Trigger>
        <Tabs.Trigger value="routines">Routines</Tabs.Trigger>
        <Tabs.Trigger value="activity">Activity</Tabs.Trigger>
        <Tabs.Trigger value="tools">Tools</Tabs.Trigger>
      </Tabs.List>
      <Tabs.Content value="tasks" className="tab-panel">
        <TaskBoard teamId={teamId} tasks={state.tasks} members={state.members} canAct={canAct} />
      </Tabs.Content>
      <Tabs.Content value="mailbox" className="tab-panel">
        <Mailbox messages={state.messages} />
      </Tabs.Content>
      <Tabs.Content value="files" className="tab-panel">
        <FileList teamId={teamId} />
      </Tabs.Content>
      <Tabs.Content value="memory" className="tab-panel">
        <MemoryPanel teamId={teamId} canAct={canAct} isOwner={state.myRole === "owner"} lastChange={state.memory.lastChange} />
      </Tabs.Content>
      <Tabs.Content value="routines" className="tab-panel">
        <RoutinesPanel
          teamId={teamId}
          canAct={canAct}
          latestActionId={state.actions[0]?.id ?? null}
          leadStatus={state.members.find((m) => m.role === "lead")?.status ?? null}
        />
      </Tabs.Content>
      <Tabs.Content value="activity" className="tab-panel">
        <RecentActivity actions={state.actions} members={state.members} people={state.people} />
      </Tabs.Content>
      <Tabs.Content value="tools" className="tab-panel">
        <ToolPolicy teamId={teamId} isOwner={state.myRole === "owner"} latestActionId={state.actions[0]?.id ?? null} />
        <McpServers teamId={teamId} isOwner={state.myRole === "owner"} latestActionId={state.actions[0]?.id ?? null} />
        {state.myRole === "owner" && <Webhooks teamId={teamId} />}
      </Tabs.Content>
    </Tabs.Root>
  );
}

/** How many files the side panel lists; the Files view has them all. */
const SHOWN_FILES = 200;

/** The workspace's first files in path order, live (the workspace feed). */
function FileList({ teamId }: { teamId: string }) {
  const live = useLiveFiles(teamId);
  const shown = live.files?.slice(0, SHOWN_FILES);
  return (
    <section aria-label="Workspace files" className="file-list">
      <h2>Files</h2>
      {live.error && <InlineError onRetry={live.retry}>The files could not be read: {live.error}</InlineError>}
      {!shown && <Skeleton label="Loading the files…" rows={3} />}
      {shown?.length === 0 && <p className="muted">No files yet. Agents and people write them here.</p>}
      <ul>
        {shown?.map((f) => (
          <li key={f.path}>
            <Link href={filesHref(teamId, { path: f.path })}>{f.path}</Link> <span className="muted">v{f.version}</span>
          </li>
        ))}
      </ul>
      <Link href={filesHref(teamId)}>Open the Files view</Link>
    </section>
  );
}
