// The room's keyboard shortcuts: one table, read by the handler and by the `?` dialog.

export interface Shortcut {
  keys: string[];
  what: string;
}

export const SHORTCUTS: readonly Shortcut[] = [
  { keys: ["/"], what: "Focus the prompt box" },
  { keys: ["j"], what: "Next agent" },
  { keys: ["k"], what: "Previous agent" },
  { keys: ["1", "2", "3", "4"], what: "Switch the centre to Agent, Timeline, Split or Files" },
  { keys: ["[", "]"], what: "Previous or next tab of the team panel (Tasks, Mailbox, Files, Activity, Tools)" },
  { keys: ["Ctrl K", "⌘ K"], what: "Open the command palette: jump to a team, an agent, a task or a file" },
  { keys: ["?"], what: "Show these shortcuts" },
];

/** What a key press asks of the room, or null. Typing in a field is never a shortcut, but Ctrl/⌘ K is. */
export type RoomKey =
  | { kind: "palette" }
  | { kind: "help" }
  | { kind: "prompt" }
  | { kind: "agent"; step: 1 | -1 }
  | { kind: "view"; index: number }
  | { kind: "panel"; step: 1 | -1 };

export function roomKey(e: { key: string; ctrlKey: boolean; metaKey: boolean; altKey: boolean }, inField: boolean): RoomKey | null {
  if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "k") return { kind: "palette" };
  if (inField || e.ctrlKey || e.metaKey || e.altKey) return null;
  switch (e.key) {
    case "?":
      return { kind: "help" };
    case "/":
      return { kind: "prompt" };
    case "j":
      return { kind: "agent", step: 1 };
    case "k":
      return { kind: "agent", step: -1 };
    case "1":
    case "2":
    case "3":
    case "4":
      return { kind: "view", index: Number(e.key) - 1 };
    case "[":
      return { kind: "panel", step: -1 };
    case "]":
      return { kind: "panel", step: 1 };
    default:
      return null;
  }
}

/** The element id of a task on the board (the palette scrolls to it). */
export const taskAnchor = (taskId: string) => `board-${taskId}`;
