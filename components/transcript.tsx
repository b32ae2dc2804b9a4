"use client";

import Link from "next/link";
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import type { TranscriptEvent } from "./api-types";
import { filesHref } from "./files/links";
import { Markdown } from "./markdown";
import { focusItemKey, foldTranscript, stoppedBy, waitText, type StopRecord, type TranscriptItem } from "./transcript-model";

// User content is rendered as text nodes or through the Markdown component (which builds
// React elements, never HTML strings), so nothing in a prompt, reply or message can run script.

/** Items rendered at first; "Load earlier" reveals more. Keeps long histories fast. */
const WINDOW = 200;

export function Transcript({
  teamId,
  events,
  running,
  onFork,
  stops = [],
  focusSeq = null,
}: {
  /** The team's room: workspace tool cards link to the file version in its Files view. */
  teamId?: string;
  events: TranscriptEvent[];
  running: boolean;
  onFork?: (seq: number) => void;
  /** People's Stops of this session (the team's action record): the turns they ended name them. */
  stops?: readonly StopRecord[];
  /** A moment to show (an event seq, from a timeline link): scrolled to and marked current, instead of following the end. */
  focusSeq?: number | null;
}) {
  const items = useMemo(() => foldTranscript(events), [events]);
  const stoppers = useMemo(() => stoppedBy(items, stops), [items, stops]);
  const focusKey = useMemo(() => (focusSeq === null ? null : focusItemKey(items, focusSeq)), [items, focusSeq]);
  const [shown, setShown] = useState(WINDOW);
  // The window reaches back to the focused item however old it is.
  const focusAt = focusKey === null ? -1 : items.findIndex((i) => i.key === focusKey);
  const size = Math.max(shown, focusAt < 0 ? 0 : items.length - focusAt);
  const visible = items.length > size ? items.slice(items.length - size) : items;
  const box = useRef<HTMLElement>(null);
  const focused = useRef<HTMLDivElement>(null);
  // Follows the end inside the transcript's own box (never scrolling the page, where several
  // transcripts may sit side by side), unless a moment is focused.
  useLayoutEffect(() => {
    const el = box.current;
    if (el && focusSeq === null) el.scrollTop = el.scrollHeight;
  }, [items.length, events.length, focusSeq]);
  // Braces matter: newer browsers return a Promise from scrollIntoView, and React would take
  // a returned value for a cleanup function.
  useEffect(() => {
    focused.current?.scrollIntoView({ block: "center" });
  }, [focusKey]);
  return (
    <section ref={box} aria-label="Transcript" className="transcript" aria-live="polite" aria-busy={running}>
      {items.length > visible.length && (
        <button type="button" className="secondary load-earlier" onClick={() => setShown((n) => n + WINDOW)}>
          Load earlier ({items.length - visible.length} more)
        </button>
      )}
      {items.length === 0 && <p className="muted">No messages yet. Send a prompt below.</p>}
      {visible.map((item) => (
        <div
          key={item.key}
          ref={item.key === focusKey ? focused : undefined}
          className={`transcript-item${item.key === focusKey ? " focused" : ""}`}
          data-seq={item.seq}
          {...(item.key === focusKey ? { role: "group", "aria-label": "Linked moment", "aria-current": "location" as const } : {})}
        >
          <Item item={item} teamId={teamId} onFork={onFork} stoppedBy={stoppers.get(item.key)} />
        </div>
      ))}
      {running && (
        <p className="muted running" role="status">
          Working…
        </p>
      )}
    </section>
  );
}

function ForkButton({ seq, onFork }: { seq: number; onFork?: (seq: number) => void }) {
  if (!onFork) return null;
  return (
    <button type="button" className="link-button" onClick={() => onFork(seq)} aria-label={`Fork a new team from event ${seq}`}>
      Fork from here
    </button>
  );
}

function Item({
  item,
  teamId,
  onFork,
  stoppedBy,
}: {
  item: TranscriptItem;
  teamId?: string;
  onFork?: (seq: number) => void;
  stoppedBy?: string;
}) {
  switch (item.kind) {
    case "user": {
      const { source } = item;
      if (source.kind === "runtime_context" || source.kind === "compaction_summary") {
        return (
          <details className="msg meta">
            <summary>{source.kind === "runtime_context" ? "Runtime context" : "Compaction summary"}</summary>
            <pre>{item.text}</pre>
          </details>
        );
      }
      if (source.kind === "team") {
        return (
          <article className="msg team" aria-label={`Team message from ${source.senderName}`}>
            <div className="who">
              Team message from <strong>{source.senderName}</strong>
              <span className="muted">{source.messageId}</span>
              <ForkButton seq={item.seq} onFork={onFork} />
            </div>
            <div className="text">{item.text}</div>
          </article>
        );
      }
      if (source.kind === "system") {
        return (
          <p className="marker notice" role="note">
            {item.text}
          </p>
        );
      }
      return (
        <article className="msg user" aria-label={`Prompt from ${source.name ?? "someone"}`}>
          <div className="who">
            <strong>{source.name ?? "Someone"}</strong>
            <ForkButton seq={item.seq} onFork={onFork} />
          </div>
          <div className="text">{item.text}</div>
        </article>
      );
    }
    case "assistant":
      return (
        <article className="msg assistant" aria-label="Reply" data-streaming={item.streaming || undefined}>
          <div className="who">
            Agent{item.interrupted && <span className="tag">interrupted</span>}
            {!item.streaming && <ForkButton seq={item.seq} onFork={onFork} />}
          </div>
          {item.text && (
            <div className="text">
              {item.streaming ? item.text : <Markdown text={item.text} />}
            </div>
          )}
          {item.toolCalls.map((c) => (
            <details key={c.toolCallId} className="tool-call">
              <summary>Tool call: {c.toolName}</summary>
              <pre>{JSON.stringify(c.input, null, 2)}</pre>
            </details>
          ))}
        </article>
      );
    case "tool":
      return (
        <details className={`msg tool${item.isError ? " tool-error" : ""}`}>
          <summary>
            {item.isError ? `Tool error ${item.errorCode ?? ""}` : "Tool result"}: {item.toolName}
            {item.file && teamId && (
              <>
                {" "}
                <Link className="tool-file" href={filesHref(teamId, item.file)}>
                  {item.file.path} v{item.file.version}
                </Link>
              </>
            )}
          </summary>
          <pre>{JSON.stringify(item.output, null, 2)}</pre>
        </details>
      );
    case "compaction":
      return <p className="marker">Earlier history compacted (through event {item.throughSeq})</p>;
    case "wait":
      // Remounted for each wait event, so the countdown starts from that wait's delay.
      return <WaitLine key={item.waitSeq} item={item} />;
    case "turn_end":
      return (
        <p className="marker" role="note">
          {item.reason === "budget" ? "Turn stopped: the team budget was reached" : `Turn ${item.reason}`}
          {stoppedBy ? ` · stopped by ${stoppedBy}` : ""}
          {item.error ? `: ${item.error}` : ""}
        </p>
      );
  }
}

/** A step waiting for the provider or backing off before a retry: live with a countdown, then a past note. */
function WaitLine({ item }: { item: Extract<TranscriptItem, { kind: "wait" }> }) {
  const [since] = useState(() => Date.now());
  const [now, setNow] = useState(since);
  const counting = item.live && item.wait.kind === "retry";
  useEffect(() => {
    if (!counting) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [counting]);
  return (
    <p className={`marker wait${item.live ? " live" : ""}`} role={item.live ? "status" : "note"}>
      {waitText(item, now - since)}
    </p>
  );
}
