"use client";

import { useQuery } from "@tanstack/react-query";
import { Command } from "cmdk";
import { useRouter } from "next/navigation";
import { Dialog } from "radix-ui";
import { useEffect, useRef, useState } from "react";
import type { TeamState } from "../api-types";
import { filesHref } from "../files/links";
import { roomKey, SHORTCUTS, taskAnchor } from "./room-keys";
import { roomHref, type RoomLocation } from "./room-url";
import { ROOM_VIEWS } from "./room-views";
import { PANEL_TABS, type PanelTab } from "./side-panel";
import { SKIP_TARGETS } from "../skip-links";
import { useTRPC } from "../trpc";
import { DialogPanel, Modal } from "../ui/dialog";

// The room's keyboard layer: the shortcuts of room-keys.ts, the `?` dialog that lists them, and
// the command palette (Ctrl/⌘ K, cmdk in a Radix dialog) that jumps to a team, an agent, a task
// or a file by name.

export function RoomCommands({
  teamId,
  state,
  location,
  panel,
  onPanel,
  onCentre,
}: {
  teamId: string;
  state: TeamState;
  location: RoomLocation;
  panel: PanelTab;
  /** Shows the team panel at a tab (on a phone, its screen). */
  onPanel: (tab: PanelTab) => void;
  /** Shows the centre (on a phone, its screen) before focus moves into it. */
  onCentre: () => void;
}) {
  const router = useRouter();
  const [palette, setPalette] = useState(false);
  const [help, setHelp] = useState(false);
  const names = state.members.map((m) => m.name);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target instanceof HTMLElement ? e.target : null;
      const inField = !!target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
      const key = roomKey(e, inField);
      // An open dialog keeps the keyboard (Escape closes it).
      if (!key || ((palette || help) && key.kind !== "palette")) return;
      e.preventDefault();
      const go = (loc: Partial<RoomLocation>) => router.replace(roomHref(teamId, { ...location, seq: null, ...loc }));
      switch (key.kind) {
        case "palette":
          return setPalette((open) => !open);
        case "help":
          return setHelp(true);
        case "prompt": {
          onCentre();
          const box = document.getElementById(SKIP_TARGETS.prompt);
          if (box) return box.focus();
          return go({ view: ROOM_VIEWS[0]!.id });
        }
        case "agent": {
          const at = Math.max(0, names.indexOf(location.member));
          return go({ view: ROOM_VIEWS[0]!.id, member: names[(at + key.step + names.length) % names.length] });
        }
        case "view": {
          const view = ROOM_VIEWS[key.index];
          return view ? go({ view: view.id }) : undefined;
        }
        case "panel": {
          const at = PANEL_TABS.indexOf(panel);
          return onPanel(PANEL_TABS[(at + key.step + PANEL_TABS.length) % PANEL_TABS.length]!);
        }
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [router, teamId, location, names, palette, help, panel, onPanel, onCentre]);

  return (
    <>
      <Palette open={palette} onOpenChange={setPalette} teamId={teamId} state={state} location={location} onTasks={() => onPanel("tasks")} />
      <Modal open={help} onOpenChange={setHelp} title="Keyboard shortcuts" description="In the team room, outside a text field.">
        <dl className="shortcuts">
          {SHORTCUTS.map((s) => (
            <div key={s.what}>
              <dt>
                {s.keys.map((k, i) => (
                  <span key={k}>
                    {i > 0 && " / "}
                    <kbd>{k}</kbd>
                  </span>
                ))}
              </dt>
              <dd>{s.what}</dd>
            </div>
          ))}
        </dl>
      </Modal>
    </>
  );
}

function Palette({
  open,
  onOpenChange,
  teamId,
  state,
  location,
  onTasks,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  teamId: string;
  state: TeamState;
  location: RoomLocation;
  /** Shows the team panel's Tasks tab. */
  onTasks: () => void;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const teams = useQuery({ ...trpc.team.list.queryOptions(), enabled: open });
  const files = useQuery({ ...trpc.workspace.list.queryOptions({ teamId, limit: 1000 }), enabled: open });
  // Where focus goes once the palette has closed (a task on the board), instead of back to where it was.
  const focusAfter = useRef<string | null>(null);
  const jump = (href: string) => {
    onOpenChange(false);
    router.push(href);
  };
  return (
    <Dialog.Root open={open} onOpenChange={onOpenChange}>
      <DialogPanel
        shape="palette"
        aria-describedby={undefined}
        onCloseAutoFocus={(e) => {
          const id = focusAfter.current;
          focusAfter.current = null;
          if (!id) return;
          e.preventDefault();
          // The Tasks tab may only now be rendering: look for the task in the next frame.
          requestAnimationFrame(() => {
            const target = document.getElementById(id);
            target?.scrollIntoView({ block: "center" });
            target?.focus();
          });
        }}
      >
        <Dialog.Title className="sr-only">Command palette</Dialog.Title>
        <Command label="Command palette" loop>
          <Command.Input placeholder="Jump to a team, an agent, a task or a file…" aria-label="Search teams, agents, tasks and files" />
          <Command.List>
            <Command.Empty>Nothing matches.</Command.Empty>
            <Command.Group heading="Agents">
              {state.members.map((m) => (
                <Command.Item key={m.sessionId} value={`agent ${m.name} ${m.description}`} onSelect={() => jump(roomHref(teamId, { ...location, view: ROOM_VIEWS[0]!.id, member: m.name, seq: null }))}>
                  {m.name} <span className="muted">· {m.role}</span>
                </Command.Item>
              ))}
            </Command.Group>
            <Command.Group heading="Tasks">
              {state.tasks.map((t) => (
                <Command.Item
                  key={t.id}
                  value={`task ${t.id} ${t.subject}`}
                  onSelect={() => {
                    focusAfter.current = taskAnchor(t.id);
                    onTasks();
                    onOpenChange(false);
                  }}
                >
                  {t.id} <span className="muted">· {t.subject}</span>
                </Command.Item>
              ))}
            </Command.Group>
            <Command.Group heading="Files">
              {files.data?.files.map((f) => (
                <Command.Item key={f.path} value={`file ${f.path}`} onSelect={() => jump(filesHref(teamId, { path: f.path }))}>
                  {f.path}
                </Command.Item>
              ))}
            </Command.Group>
            <Command.Group heading="Teams">
              {teams.data?.map((t) => (
                <Command.Item key={t.id} value={`team ${t.title} ${t.id}`} onSelect={() => jump(`/teams/${t.id}`)}>
                  {t.title}
                </Command.Item>
              ))}
            </Command.Group>
          </Command.List>
        </Command>
      </DialogPanel>
    </Dialog.Root>
  );
}
