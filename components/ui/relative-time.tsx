"use client";

import { useSyncExternalStore } from "react";
import { relativeTime } from "../relative-time";

// A time shown relatively ("4 min ago"), the exact time on hover. One clock for every such
// element on the page, ticking every 30 s.

const listeners = new Set<() => void>();
let now = Date.now();
let timer: ReturnType<typeof setInterval> | null = null;

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  timer ??= setInterval(() => {
    now = Date.now();
    for (const l of listeners) l();
  }, 30_000);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
  };
}

export function RelativeTime({ at, className }: { at: Date | string; className?: string }) {
  const clock = useSyncExternalStore(subscribe, () => now, () => now);
  const date = new Date(at);
  return (
    // The server's clock and zone differ from the browser's: the browser's words win.
    <time className={className} dateTime={date.toISOString()} title={date.toLocaleString()} suppressHydrationWarning>
      {relativeTime(date, Math.max(clock, date.getTime()))}
    </time>
  );
}
