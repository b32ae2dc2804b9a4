"use client";
import { Button } from "../ui/button";

// Phones show one part of the room at a time; this bar switches between them. Transcript and
// Files are both the centre (its agent and Files views); Tasks is the team panel.

export type PhoneScreen = "agents" | "centre" | "tasks" | "people";
export type SwitcherItem = "Agents" | "Transcript" | "Tasks" | "Files" | "People";

export const SWITCHER_ITEMS: readonly SwitcherItem[] = ["Agents", "Transcript", "Tasks", "Files", "People"];

/** The item that shows `screen` with the centre on `view`. */
export function currentItem(screen: PhoneScreen, view: string): SwitcherItem {
  if (screen === "centre") return view === "files" ? "Files" : "Transcript";
  return screen === "agents" ? "Agents" : screen === "tasks" ? "Tasks" : "People";
}

export function RoomSwitcher({ current, onPick }: { current: SwitcherItem; onPick: (item: SwitcherItem) => void }) {
  return (
    <nav aria-label="Room sections" className="room-switcher">
      {SWITCHER_ITEMS.map((item) => (
        <Button key={item} aria-current={item === current ? "true" : undefined} onClick={() => onPick(item)}>
          {item}
        </Button>
      ))}
    </nav>
  );
}
