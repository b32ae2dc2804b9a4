"use client";

import { summaryLine } from "./summary-line";
import { Skeleton } from "../ui/skeleton";
import { Link } from "../ui/link";
import { parseTeamMessage } from "~/shared/message-format";
import { MessageMenu } from "../ui/message-menu";
import { memo, useEffect, useLayoutEffect, useMemo, useRef, useState, type Ref } from "react";
import { listItems, listSlice } from "../chunk-list";
import { filesHref } from "../files/links";
import { Markdown } from "../markdown";
import { EMPTY_FOLD, focusItemAt, stoppedBy, waitText, type StopRecord, type TranscriptItem } from "./transcript-model";
import type { LoadedTranscript } from "./transcript-pages";
import { Button } from "../ui/button";
import { Alert } from "../ui/alert";

// User content is rendered as text nodes or through the Markdown component (which builds
// React elements, never HTML strings), so nothing in a prompt, reply or message can run script.

/** Items rendered at first; "Load earlier" reveals more (and reads earlier pages). Keeps long histories fast. */
const WINDOW = 200;
/** How close to the bottom (px) still counts as following the end. */
const END_SLACK = 32;

/** What the transcript shows and how it reads further back (`useSessionLive`). */
export interface TranscriptSource {
  /** Null until the newest page is in. */
  transcript: LoadedTranscript | null;
  loadEarlier: (throughSeq?: number | null) => void;
  loadingEarlier: boolean;
  earlierError: { message: string } | null;
}

export function Transcript({
  teamId,
  source,
  running,
  onFork,
  stops = [],
  focusSeq = null,
  anchorId,
}: {
  /** The element id skip links jump to (the agent view's transcript). */
  anchorId?: string;
  /** The team's room: workspace tool cards link to the file version in its Files view. */
  teamId?: string;
  source: TranscriptSource;
  running: boolean;
  /** Stable across renders (items are memoised). */
  onFork?: (seq: number) => void;
  /** People's Stops of this session (the team's action record): the turns they ended name them. */
  stops?: readonly StopRecord[];
  /** A moment to show (an event seq, from a timeline link): scrolled to and marked current, instead of following the end. */
  focusSeq?: number | null;
}) {
  const { transcript, loadEarlier, loadingEarlier, earlierError } = source;
  const fold = transcript?.fold ?? EMPTY_FOLD;
  const { items } = fold;
  const stoppers = useMemo(() => stoppedBy(fold.ends, stops), [fold.ends, stops]);
  const focus = useMemo(() => (focusSeq === null ? null : focusItemAt(listItems(items), focusSeq)), [items, focusSeq]);
  const focusKey = focus?.key ?? null;
  // A linked moment older than what is held: read back until it is in.
  const focusEarlier = focusSeq !== null && !!transcript?.hasEarlier && focusSeq < fold.firstSeq;
  useEffect(() => {
    if (focusEarlier && !loadingEarlier && !earlierError) loadEarlier(focusSeq);
  }, [focusEarlier, focusSeq, loadingEarlier, earlierError, loadEarlier]);
  const [shown, setShown] = useState(WINDOW);
  // The window reaches back to the focused item however old it is.
  const size = Math.max(shown, focus ? items.length - focus.index : 0);
  const start = Math.max(0, items.length - size);
  const visible = useMemo(() => listSlice(items, start), [items, start]);
  const box = useRef<HTMLElement>(null);
  const focused = useRef<HTMLDivElement>(null);
  // Whether the reader is at the end (where new events keep them); scrolled up to read, they stay.
  const atEnd = useRef(true);
  // Follows the end inside the transcript's own box (never scrolling the page, where several
  // transcripts may sit side by side), unless a moment is focused.
  useLayoutEffect(() => {
    const el = box.current;
    if (el && focusSeq === null && atEnd.current) el.scrollTop = el.scrollHeight;
  }, [fold.lastSeq, focusSeq]);
  // Braces matter: newer browsers return a Promise from scrollIntoView, and React would take
  // a returned value for a cleanup function.
  useEffect(() => {
    focused.current?.scrollIntoView({ block: "center" });
  }, [focusKey]);
  const earlierHere = start > 0 || !!transcript?.hasEarlier;
  return (
    <section
      ref={box}
      id={anchorId}
      aria-label="Transcript"
      className="transcript"
      // Scrollable: reachable by keyboard, so its content scrolls with the arrow keys.
      tabIndex={0}
      aria-live="polite"
      aria-busy={running}
      onScroll={(e) => {
        const el = e.currentTarget;
        atEnd.current = el.scrollHeight - el.scrollTop - el.clientHeight <= END_SLACK;
      }}
    >
      {earlierHere && (
        <Button
         
          variant="secondary" className="load-earlier"
          disabled={loadingEarlier}
          onClick={() => {
            setShown((n) => n + WINDOW);
            // What the window hides first; then a page from the server.
            if (start < WINDOW) loadEarlier();
          }}
        >
          {loadingEarlier ? "Loading earlier…" : start > 0 ? `Load earlier (${start} more)` : "Load earlier"}
        </Button>
      )}
      {earlierError && (
        <Alert>
          Could not load earlier events: {earlierError.message}
        </Alert>
      )}
      {transcript === null ? (
        <Skeleton label="Loading the transcript…" rows={3} tall />
      ) : (
        items.length === 0 && !transcript.hasEarlier && <p className="muted">No messages yet. Send a prompt below.</p>
      )}
      {visible.map((item) => (
        <Row
          key={item.key}
          item={item}
          focused={item.key === focusKey}
          focusRef={item.key === focusKey ? focused : undefined}
          teamId={teamId}
          onFork={onFork}
          stoppedBy={stoppers.get(item.key)}
        />
      ))}
      {running && (
        <p className="muted running" role="status">
          Working…
        </p>
      )}
    </section>
  );
}

/** One item; memoised, so a batch re-renders only the items it changed. */
const Row = memo(function Row({
  item,
  focused,
  focusRef,
  teamId,
  onFork,
  stoppedBy,
}: {
  item: TranscriptItem;
  focused: boolean;
  focusRef?: Ref<HTMLDivElement>;
  teamId?: string;
  onFork?: (seq: number) => void;
  stoppedBy?: string;
}) {
  return (
    <div
      ref={focusRef}
      className={`transcript-item${focused ? " focused" : ""}`}
      data-seq={item.seq}
      {...(focused ? { role: "group", "aria-label": "Linked moment", "aria-current": "location" as const } : {})}
    >
      <Item item={item} teamId={teamId} onFork={onFork} stoppedBy={stoppedBy} />
    </div>
  );
});


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
            <summary>
              {source.kind === "runtime_context" ? "Runtime context" : "Compaction summary"}
              <span className="summary-line"> · {summaryLine(item.text)}</span>
            </summary>
            <pre>{item.text}</pre>
          </details>
        );
      }
      if (source.kind === "team") {
        return (
          <article className="msg team" aria-label={`Team message from ${source.senderName}`}>
            <div className="who">
              Team message from <strong>{source.senderName}</strong>
              <span className="spacer" />
              <MessageMenu text={item.text} id={source.messageId} onFork={onFork && (() => onFork(item.seq))} />
            </div>
            {/* The header line names the message for the model; people read the sender above. */}
            <div className="text">{parseTeamMessage(item.text)?.content ?? item.text}</div>
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
        <article className="msg user" aria-label={`Prompt from ${source.name ?? "someone"}${source.routine ? ` by routine ${source.routine.name}` : ""}`}>
          <div className="who">
            <strong>{source.name ?? "Someone"}</strong>
            {source.routine && <span className="muted">&nbsp;· by routine &ldquo;{source.routine.name}&rdquo;</span>}
            <span className="spacer" />
            <MessageMenu text={item.text} onFork={onFork && (() => onFork(item.seq))} />
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
            <span className="spacer" />
            {!item.streaming && <MessageMenu text={item.text} onFork={onFork && (() => onFork(item.seq))} />}
          </div>
          {item.text && (
            <div className="text">
              {/* One element while it streams and once final: the plain blocks a long reply keeps are not laid out again. */}
              <Markdown text={item.text} plain={item.streaming} />
            </div>
          )}
          {item.toolCalls.map((c) => (
            <details key={c.toolCallId} className="tool-call">
              <summary>
                Tool call: {c.toolName}
                <span className="summary-line"> · {summaryLine(c.input)}</span>
              </summary>
              <pre>{JSON.stringify(c.input, null, 2)}</pre>
            </details>
          ))}
        </article>
      );
    case "tool":
      return (
        // The file link sits beside the disclosure, not in its summary: no control inside another.
        <div className={`msg tool${item.isError ? " tool-error" : ""}`}>
          <details>
            <summary>
              {item.isError ? `Tool error ${item.errorCode ?? ""}` : "Tool result"}: {item.toolName}
              <span className="summary-line"> · {summaryLine(item.output)}</span>
            </summary>
            <pre>{typeof item.output === "string" ? item.output : JSON.stringify(item.output, null, 2)}</pre>
          </details>
          {item.file && teamId && (
            <Link className="tool-file" href={filesHref(teamId, item.file)}>
              {item.file.path} v{item.file.version}
            </Link>
          )}
          {item.memory && (
            <span className="tag memory-mark">{item.memory.status === "approved" ? "Saved a memory (the team approves as proposals come)" : "Proposed a memory: see the Memory tab"}</span>
          )}
        </div>
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
