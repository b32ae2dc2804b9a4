"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState, type FormEvent, type KeyboardEvent } from "react";
import { StatusBadge } from "./status-badge";
import { Transcript } from "./transcript";
import { useTRPC } from "./trpc";
import { useSessionLive } from "./use-session-live";

export function SessionRoom({ sessionId }: { sessionId: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const { events, state, connection, error } = useSessionLive(sessionId);
  const [text, setText] = useState("");
  const prompt = useMutation(trpc.session.prompt.mutationOptions({ onSuccess: () => setText("") }));
  const stop = useMutation(trpc.session.stop.mutationOptions());
  const remove = useMutation(trpc.session.removeQueued.mutationOptions());
  const steer = useMutation(trpc.session.steerNow.mutationOptions());
  const fork = useMutation(trpc.session.fork.mutationOptions({ onSuccess: (s) => router.push(`/sessions/${s.id}`) }));

  const session = state?.session;
  const queued = state?.inbox.filter((i) => i.mode === "queue") ?? [];

  function submit(e?: FormEvent) {
    e?.preventDefault();
    if (text.trim()) prompt.mutate({ sessionId, text });
  }
  function onKeyDown(e: KeyboardEvent<HTMLTextAreaElement>) {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      submit();
    }
  }

  return (
    <main className="page room">
      <div className="room-head">
        <h1>{session?.title ?? "Session"}</h1>
        {session && <StatusBadge status={session.status} />}
        {connection === "connecting" && events.length > 0 && (
          <span role="status" className="muted">
            Reconnecting…
          </span>
        )}
        <span className="spacer" />
        <button type="button" onClick={() => fork.mutate({ sessionId })} disabled={!session || fork.isPending}>
          Fork
        </button>
      </div>
      {error && (
        <p role="alert" className="error">
          {error.message}
        </p>
      )}

      <Transcript events={events} running={session?.running ?? false} />

      <section aria-label="Queued prompts" className="queue">
        {queued.length > 0 && <h2 className="label">Queued ({queued.length})</h2>}
        <ol>
          {queued.map((item) => (
            <li key={item.id} className="queued">
              <span className="grow">{item.text}</span>
              <button type="button" onClick={() => steer.mutate({ sessionId, itemId: item.id })} disabled={!session?.running}>
                Steer now
              </button>
              <button type="button" onClick={() => remove.mutate({ sessionId, itemId: item.id })}>
                Remove
              </button>
            </li>
          ))}
        </ol>
      </section>

      <form className="composer" onSubmit={submit} aria-label="Prompt">
        <label className="grow">
          <span className="sr-only">Prompt</span>
          <textarea
            value={text}
            onChange={(e) => setText(e.target.value)}
            onKeyDown={onKeyDown}
            placeholder="Send a prompt (Enter to queue, Shift+Enter for a new line)"
            rows={3}
            maxLength={65_536}
          />
        </label>
        <div className="composer-actions">
          <button type="submit" disabled={!text.trim() || prompt.isPending}>
            Send
          </button>
          <button type="button" onClick={() => stop.mutate({ sessionId })} disabled={!session?.running}>
            Stop
          </button>
        </div>
      </form>
      {prompt.error && (
        <p role="alert" className="error">
          {prompt.error.message}
        </p>
      )}
    </main>
  );
}
