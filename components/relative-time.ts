// Times as people read them in a room: "just now", "4 min ago", "2 h ago", then the date. The
// exact time goes in the element's title (components/ui/relative-time.tsx).

export function relativeTime(at: Date, now: number): string {
  const seconds = Math.round((now - at.getTime()) / 1000);
  if (seconds < 45) return "just now";
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  if (days < 7) return days === 1 ? "yesterday" : `${days} days ago`;
  return at.toLocaleDateString(undefined, { day: "numeric", month: "short", year: at.getFullYear() === new Date(now).getFullYear() ? undefined : "numeric" });
}
