"use client";

import { Skeleton } from "../ui/skeleton";
import { Link } from "../ui/link";
import { useEffect, useLayoutEffect, useRef, type CSSProperties } from "react";
import type { TimelineEntry, TimelineKind } from "../api-types";
import { accessLost } from "../app-error";
import type { RoomLocation } from "./room-url";
import { describeEntry, entryHref, KIND_LABELS, memberHue, TIMELINE_KINDS, toggled } from "./timeline-model";
import { useTimeline } from "./use-timeline";
import { Button } from "../ui/button";
import { Alert, ErrorAlert } from "../ui/alert";

// Entries are text nodes and links built by React: nothing in a prompt or message runs script.

/**
 * The whole team at once: every member's turns, tool calls, prompts, messages, task changes
 * and file changes as they commit, newest last, each linking to its moment in the member's
 * transcript or to the file version. Filters pick members and kinds (none picked: all).
 */
export interface TimelineFilters {
  who: string[];
  kinds: TimelineKind[];
}
export const NO_FILTERS: TimelineFilters = { who: [], kinds: [] };

/** Filters are the room's (kept while the centre shows another view), so they come in as props. */
export function Timeline({
  teamId,
  members,
  location,
  filters,
  onFilters,
}: {
  teamId: string;
  members: readonly string[];
  location: RoomLocation;
  filters: TimelineFilters;
  onFilters: (f: TimelineFilters) => void;
}) {
  const { who, kinds } = filters;
  const setWho = (f: (l: string[]) => string[]) => onFilters({ ...filters, who: f(who) });
  const setKinds = (f: (l: TimelineKind[]) => TimelineKind[]) => onFilters({ ...filters, kinds: f(kinds) });
  const { entries, hasEarlier, loadEarlier, loadingEarlier, failure, connection, error } = useTimeline(teamId, {
    members: who.length ? who : undefined,
    kinds: kinds.length ? kinds : undefined,
  });

  // Follows the newest entry while the list is scrolled to its end; reading earlier ones stays put.
  const list = useRef<HTMLOListElement>(null);
  const atEnd = useRef(true);
  useLayoutEffect(() => {
    const el = list.current;
    if (el && atEnd.current) el.scrollTop = el.scrollHeight;
  }, [entries]);
  // …also when the list's box changes size (a narrower window, the stacked layout).
  const shown = entries !== null;
  useEffect(() => {
    const el = list.current;
    if (!el) return;
    const follow = new ResizeObserver(() => {
      if (atEnd.current) el.scrollTop = el.scrollHeight;
    });
    follow.observe(el);
    return () => follow.disconnect();
  }, [shown]);

  return (
    <section aria-label="Timeline" className="timeline">
      <div className="panel-head">
        <h2>Timeline</h2>
        {connection === "connecting" && entries && (
          <span role="status" className="muted">
            Reconnecting…
          </span>
        )}
      </div>
      <div className="timeline-filters">
        <FilterGroup label="Filter by member" hint="Who" options={members} chosen={who} onToggle={(m) => setWho((l) => toggled(l, m))} name={(m) => m} />
        <FilterGroup label="Filter by kind" hint="What" options={TIMELINE_KINDS} chosen={kinds} onToggle={(k) => setKinds((l) => toggled(l, k))} name={(k) => KIND_LABELS[k]} />
      </div>
      {error && (
        <Alert>
          {accessLost(error) ? "You no longer have access to this team" : error.message}
        </Alert>
      )}
      <ErrorAlert error={failure} />
      {!entries && !error && <Skeleton label="Loading the timeline…" rows={6} />}
      {entries && (
        <ol
          ref={list}
          aria-label="Timeline entries"
          className="timeline-entries"
          onScroll={(e) => {
            const el = e.currentTarget;
            atEnd.current = el.scrollHeight - el.scrollTop - el.clientHeight < 8;
          }}
        >
          {hasEarlier && (
            <li className="timeline-more">
              <Button variant="secondary" className="load-earlier" onClick={loadEarlier} disabled={loadingEarlier}>
                Load earlier
              </Button>
            </li>
          )}
          {entries.length === 0 && <li className="muted">Nothing yet{who.length || kinds.length ? " for this filter" : ""}.</li>}
          {entries.map((e) => (
            <Entry key={e.id} entry={e} href={entryHref(teamId, location, e)} hue={memberHue(members, e.member)} />
          ))}
        </ol>
      )}
    </section>
  );
}

function Entry({ entry, href, hue }: { entry: TimelineEntry; href: string | null; hue: number | null }) {
  const text = describeEntry(entry);
  const style = hue === null ? undefined : ({ "--member-hue": hue } as CSSProperties);
  return (
    <li className={`timeline-entry kind-${entry.kind}${entry.member === null ? " by-person" : ""}`} style={style}>
      <time className="muted" dateTime={new Date(entry.at).toISOString()}>
        {new Date(entry.at).toLocaleTimeString()}
      </time>
      <span className="timeline-kind">{entry.kind}</span>
      {href ? (
        <Link href={href} className="timeline-text">
          {text}
        </Link>
      ) : (
        <span className="timeline-text">{text}</span>
      )}
      {entry.kind === "message" && <span className={`badge badge-${entry.state}`}>{entry.state}</span>}
      {entry.kind === "tool" && !entry.ok && <span className="badge badge-failed">error</span>}
      {entry.kind === "file" && entry.warnings.length > 0 && (
        <span className="warning timeline-warnings" title={entry.warnings.join("\n")}>
          {entry.warnings.length === 1 ? "1 scope warning" : `${entry.warnings.length} scope warnings`}
        </span>
      )}
    </li>
  );
}

function FilterGroup<T extends string>({
  label,
  hint,
  options,
  chosen,
  onToggle,
  name,
}: {
  label: string;
  /** The short visible label (the group's name says it in full). */
  hint: string;
  options: readonly T[];
  chosen: readonly T[];
  onToggle: (option: T) => void;
  name: (option: T) => string;
}) {
  return (
    <div role="group" aria-label={label} className="filter-group">
      <span className="filter-label" aria-hidden="true">
        {hint}
      </span>
      {options.map((o) => (
        <Button key={o} className="chip-toggle" aria-pressed={chosen.includes(o)} onClick={() => onToggle(o)}>
          {name(o)}
        </Button>
      ))}
    </div>
  );
}
