"use client";

import { useRefetchOn } from "./use-refetch-on";
import { InlineError, Skeleton } from "./ui/skeleton";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { Tabs } from "radix-ui";
import type { TeamState } from "./api-types";
import { filesHref } from "./files/links";
import { Mailbox } from "./mailbox";
import { RecentActivity } from "./recent-activity";
import { TaskBoard } from "./task-board";
import { ToolPolicy } from "./tool-policy";
import { McpServers } from "./mcp-servers";
import { Webhooks } from "./webhooks";
import { useTRPC } from "./trpc";

// The room's right panel: one tab at a time (Radix Tabs) of Tasks, Mailbox, Files, Activity and
// the team's Tools (its policy), each with its count. Files lists the workspace; a file opens in the centre's Files view.

export const PANEL_TABS = ["tasks", "mailbox", "files", "activity", "tools"] as const;
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
        <FileList teamId={teamId} lastChange={state.workspace.lastChange} />
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

/** The workspace's files, newest change first; re-read when the workspace changes. */
function FileList({ teamId, lastChange }: { teamId: string; lastChange: number }) {
  const trpc = useTRPC();
  const files = useQuery(trpc.workspace.list.queryOptions({ teamId, limit: 200 }));
  const { refetch } = files;
  useRefetchOn(refetch, lastChange);
  return (
    <section aria-label="Workspace files" className="file-list">
      <h2>Files</h2>
      {files.error && <InlineError onRetry={() => void refetch()}>The files could not be read: {files.error.message}</InlineError>}
      {files.isPending && <Skeleton label="Loading the files…" rows={3} />}
      {files.data?.files.length === 0 && <p className="muted">No files yet. Agents and people write them here.</p>}
      <ul>
        {files.data?.files.map((f) => (
          <li key={f.path}>
            <Link href={filesHref(teamId, { path: f.path })}>{f.path}</Link> <span className="muted">v{f.version}</span>
          </li>
        ))}
      </ul>
      <Link href={filesHref(teamId)}>Open the Files view</Link>
    </section>
  );
}
