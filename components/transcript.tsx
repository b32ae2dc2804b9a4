"use client";

import { useEffect, useMemo, useRef } from "react";
import type { SessionEvent } from "~/server/runtime/events";
import { foldTranscript, type TranscriptItem } from "./transcript-model";

// User content is rendered as text nodes only (React escapes it), so nothing in a prompt or
// reply can execute script.

export function Transcript({ events, running }: { events: SessionEvent[]; running: boolean }) {
  const items = useMemo(() => foldTranscript(events), [events]);
  const end = useRef<HTMLDivElement>(null);
  // Braces matter: newer browsers return a Promise from scrollIntoView, and React would take
  // a returned value for a cleanup function.
  useEffect(() => {
    end.current?.scrollIntoView({ block: "end" });
  }, [items.length, events.length]);
  return (
    <section aria-label="Transcript" className="transcript" aria-live="polite" aria-busy={running}>
      {items.length === 0 && <p className="muted">No messages yet. Send a prompt below.</p>}
      {items.map((item) => (
        <Item key={item.key} item={item} />
      ))}
      {running && (
        <p className="muted running" role="status">
          Agent is working…
        </p>
      )}
      <div ref={end} />
    </section>
  );
}

function Item({ item }: { item: TranscriptItem }) {
  switch (item.kind) {
    case "user":
      if (item.source.kind === "runtime_context" || item.source.kind === "compaction_summary") {
        return (
          <details className="msg meta">
            <summary>{item.source.kind === "runtime_context" ? "Runtime context" : "Compaction summary"}</summary>
            <pre>{item.text}</pre>
          </details>
        );
      }
      return (
        <article className="msg user" aria-label="Prompt">
          <div className="who">{item.source.kind === "human" ? (item.source.author ?? "You") : item.source.kind}</div>
          <div className="text">{item.text}</div>
        </article>
      );
    case "assistant":
      return (
        <article className="msg assistant" aria-label="Reply" data-streaming={item.streaming || undefined}>
          <div className="who">
            Agent{item.interrupted && <span className="tag">interrupted</span>}
          </div>
          {item.text && <div className="text">{item.text}</div>}
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
          </summary>
          <pre>{JSON.stringify(item.output, null, 2)}</pre>
        </details>
      );
    case "compaction":
      return <p className="marker">Earlier history compacted (through event {item.throughSeq})</p>;
    case "turn_end":
      return (
        <p className="marker" role="note">
          Turn {item.reason}
          {item.error ? `: ${item.error}` : ""}
        </p>
      );
  }
}
