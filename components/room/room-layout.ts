"use client";

import { useSyncExternalStore } from "react";
import { z } from "zod";

// The room's shape (docs/DECISIONS.md, UI). Wide windows show the sidebar (collapsible),
// the centre and the team panel (collapsible, or wider); medium ones put the sidebar in a
// drawer; phones show one screen at a time under a switcher. The widths are also room.css's
// media queries (room-layout.test.ts keeps the two equal). What a person chose for the sidebar
// and the panel is kept in this browser.

export const WIDE_MIN_PX = 1280;
export const MEDIUM_MIN_PX = 768;

export type RoomWidth = "wide" | "medium" | "phone";

const queries = { wide: `(min-width: ${WIDE_MIN_PX}px)`, medium: `(min-width: ${MEDIUM_MIN_PX}px)` } as const;

function readWidth(): RoomWidth {
  if (window.matchMedia(queries.wide).matches) return "wide";
  return window.matchMedia(queries.medium).matches ? "medium" : "phone";
}

function subscribeWidth(onChange: () => void): () => void {
  const lists = Object.values(queries).map((q) => window.matchMedia(q));
  for (const l of lists) l.addEventListener("change", onChange);
  return () => lists.forEach((l) => l.removeEventListener("change", onChange));
}

/** The window's class of width; the server (and hydration) assume a wide one, CSS shapes the first paint. */
export function useRoomWidth(): RoomWidth {
  return useSyncExternalStore(subscribeWidth, readWidth, () => "wide");
}

export const LayoutPrefsSchema = z.object({
  sidebar: z.enum(["shown", "hidden"]).catch("shown"),
  panel: z.enum(["normal", "wide", "hidden"]).catch("normal"),
});
export type LayoutPrefs = z.infer<typeof LayoutPrefsSchema>;

const DEFAULT_PREFS: LayoutPrefs = { sidebar: "shown", panel: "normal" };
const KEY = "agent-teams.room-layout";
const listeners = new Set<() => void>();
let cached: { raw: string | null; prefs: LayoutPrefs } | null = null;

/** Stored preferences, anything unreadable taken as the default. */
export function parsePrefs(raw: string | null): LayoutPrefs {
  if (!raw) return DEFAULT_PREFS;
  try {
    return LayoutPrefsSchema.parse(JSON.parse(raw));
  } catch {
    return DEFAULT_PREFS;
  }
}

function readPrefs(): LayoutPrefs {
  let raw: string | null = null;
  try {
    raw = window.localStorage.getItem(KEY);
  } catch {
    // Storage refused (privacy settings): the defaults, for this page's life.
  }
  if (cached?.raw !== raw) cached = { raw, prefs: parsePrefs(raw) };
  return cached.prefs;
}

function subscribePrefs(onChange: () => void): () => void {
  listeners.add(onChange);
  // Another tab changed them.
  window.addEventListener("storage", onChange);
  return () => {
    listeners.delete(onChange);
    window.removeEventListener("storage", onChange);
  };
}

export function useLayoutPrefs(): [LayoutPrefs, (change: Partial<LayoutPrefs>) => void] {
  const prefs = useSyncExternalStore(subscribePrefs, readPrefs, () => DEFAULT_PREFS);
  const set = (change: Partial<LayoutPrefs>) => {
    try {
      window.localStorage.setItem(KEY, JSON.stringify({ ...readPrefs(), ...change }));
    } catch {
      cached = { raw: null, prefs: { ...readPrefs(), ...change } };
    }
    listeners.forEach((l) => l());
  };
  return [prefs, set];
}
