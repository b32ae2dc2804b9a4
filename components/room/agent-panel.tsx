"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import type { AppErrorCode, InboxItem, Spend } from "../api-types";
import { formatCost } from "../models";
import { accessLost, appCodeOf } from "../app-error";
import type { AgentStatusName } from "./agent-status";
import { SKIP_TARGETS } from "../skip-links";
import { StatusBadge } from "../status-badge";
import type { AgentStatus } from "~/server/runtime/sessions";
import { Transcript } from "./transcript";
import { useTRPC } from "../trpc";
import { useSessionLive } from "./use-session-live";
import { ViewerHint } from "../viewer-hint";
import { LIMITS } from "~/shared/limits";
import type { StopRecord } from "./transcript-model";
import { Button } from "../ui/button";
import { Alert, ErrorAlert } from "../ui/alert";
import { Field } from "../ui/field";

/**
 * One agent: its live transcript, its queued prompts (with who queued and edited them) and a
 * composer. Works for any member. Without `canAct` (a viewer) nothing here acts.
 */
export function AgentPanel({
  teamId,
  sessionId,
  name,
  canAct,
  onTyping,
  onSent,
  stops,
  spend,
  model,
  statusOf,
  focusSeq = null,
}: {
  /** The status the room shows for the session's status (agent-status.ts; the roster knows how its last turn ended). */
  statusOf: (status: AgentStatus) => AgentStatusName;
  /** The team's room (tool cards link to its Files view). */
  teamId: string;
  sessionId: string;
  name: string;
  canAct: boolean;
  /** A moment of the transcript to show (a timeline link's seq). */
  focusSeq?: number | null;
  /** People's Stops of this agent, from the team's action record. */
  stops: readonly StopRecord[];
  /** What the agent has spent (the team feed's roster, so it is live). */
  spend?: Spend;
  /** The agent's model, as people read it ("Claude Sonnet 4.5", not its id). */
  model?: string;
  /** A keystroke in the composer (presence: "typing to"). */
  onTyping: (sessionId: string) => void;
  onSent: () => void;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const live = useSessionLive(sessionId);
  const { state, error } = live;
  const [text, setText] = useState("");
  const prompt = useMutation(trpc.session.prompt.mutationOptions());
  const stop = useMutation(trpc.session.stop.mutationOptions());
  const fork = useMutation(trpc.session.fork.mutationOptions({ onSuccess: (s) => router.push(`/teams/${s.id}`) }));
  const { mutate: forkAt } = fork;
  // Stable, so the transcript's memoised items do not re-render for it.
  const onFork = useCallback((seq: number) => forkAt({ sessionId, throughSeq: seq }), [forkAt, sessionId]);

  const failure = prompt.error ?? stop.error ?? fork.error;
  const session = state?.session;
  const queued = state?.inbox.filter((i) => i.mode === "queue") ?? [];

  function submit(e?: FormEvent) {
    e?.preventDefault();
    const sent = text;
    if (!sent.trim()) return;
    // Cleared at once so the next prompt can be typed; a failed send puts the text back.
    setText("");
    onSent();
    prompt.mutate({ sessionId, text: sent }, { onError: () => setText((current) => current || sent) });
  }
  function onKeyDown(e: KeyboardEvent<HTMLTextAreaElement>) {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      submit();
    }
  }

  return (
    <section className="agent-panel" aria-label={`Agent ${name}`}>
      <div className="panel-head">
        <h2>{name}</h2>
        {session && <StatusBadge status={statusOf(session.status)} />}
        {model && <span className="muted agent-model">{model}</span>}
        {session?.createdBy && (
          <span className="muted created-by">
            {session.forkedFromId ? "forked" : "created"} by {session.createdBy.name}
          </span>
        )}
        {live.reconnecting && (
          <span role="status" className="muted">
            Reconnecting…
          </span>
        )}
        {spend && <SpendLine spend={spend} />}
      </div>
      {error && (
        <Alert>
          {accessLost(error) ? "You no longer have access to this team" : error.message}
        </Alert>
      )}

      <Transcript
        teamId={teamId}
        source={live}
        running={session?.running ?? false}
        stops={stops}
        focusSeq={focusSeq}
        onFork={canAct ? onFork : undefined}
        anchorId={SKIP_TARGETS.transcript}
      />

      <section aria-label="Queued prompts" className="queue">
        {queued.length > 0 && <h3 className="label">Queued ({queued.length})</h3>}
        <ol>
          {queued.map((item) => (
            <QueuedPrompt key={item.id} sessionId={sessionId} item={item} running={session?.running ?? false} canAct={canAct} />
          ))}
        </ol>
      </section>

      {canAct ? (
        <form className="composer" onSubmit={submit} aria-label={`Prompt ${name}`}>
          <Field label="Prompt" hideLabel className="grow">
            <textarea
              id={SKIP_TARGETS.prompt}
              value={text}
              onChange={(e) => {
                setText(e.target.value);
                if (e.target.value) onTyping(sessionId);
                else onSent();
              }}
              onKeyDown={onKeyDown}
              placeholder={`Prompt ${name} (Enter to queue, Shift+Enter for a new line)`}
              rows={3}
              maxLength={LIMITS.promptBytes}
            />
          </Field>
          <div className="composer-actions">
            <Button type="submit" disabled={!text.trim()}>
              Send
            </Button>
            <Button variant="secondary" onClick={() => stop.mutate({ sessionId })} disabled={!session?.running}>
              Stop
            </Button>
          </div>
        </form>
      ) : (
        <ViewerHint />
      )}
      <ErrorAlert error={failure} />
    </section>
  );
}

/**
 * Lost races, which converge silently: the item was claimed or removed meanwhile (the list
 * updates live), or the turn ended before "Steer now" (the prompt stays queued).
 */
const LOST_RACES: ReadonlySet<AppErrorCode | null> = new Set<AppErrorCode>(["QUEUE_ITEM_NOT_FOUND", "STEER_UNAVAILABLE"]);

/** How long a removed queued prompt can be brought back before the removal is sent. */
const UNDO_MS = 5_000;

/** A queued prompt with who queued (and last edited) it: edit its text, remove it, or steer it into the running turn. */
function QueuedPrompt({ sessionId, item, running, canAct }: { sessionId: string; item: InboxItem; running: boolean; canAct: boolean }) {
  const { id: itemId, text } = item;
  const by = item.source.kind === "human" ? item.source.name : undefined;
  const trpc = useTRPC();
  const [editing, setEditing] = useState<string | null>(null);
  const edit = useMutation(trpc.session.editQueued.mutationOptions({ onSuccess: () => setEditing(null) }));
  const remove = useMutation(trpc.session.removeQueued.mutationOptions());
  const steer = useMutation(trpc.session.steerNow.mutationOptions());
  const failure = [edit.error, remove.error, steer.error].find((e) => e && !LOST_RACES.has(appCodeOf(e)));
  // Removing waits UNDO_MS for an Undo before it is sent (and is sent at once if the panel closes).
  const [removing, setRemoving] = useState(false);
  const { mutate, isPending, isSuccess } = remove;
  // A removal still waiting when the panel closes (another agent, another page) is sent then.
  const unsent = useRef<(() => void) | null>(null);
  // Declared first: on unmount its cleanup runs before the timer's, while the removal is still held.
  useEffect(() => () => unsent.current?.(), []);
  useEffect(() => {
    if (!removing || isPending || isSuccess) return;
    const sendNow = () => mutate({ sessionId, itemId });
    unsent.current = sendNow;
    const timer = setTimeout(sendNow, UNDO_MS);
    return () => {
      clearTimeout(timer);
      unsent.current = null;
    };
  }, [removing, isPending, isSuccess, mutate, sessionId, itemId]);
  if (removing && !failure) {
    return (
      <li className="queued removed">
        <span className="grow" role="status">
          Queued prompt removed.
        </span>
        <Button variant="secondary" onClick={() => setRemoving(false)} disabled={isPending || isSuccess}>
          Undo
        </Button>
      </li>
    );
  }
  return (
    <li className="queued">
      {editing === null ? (
        <span className="grow">
          {text}
          <span className="muted queued-by">
            {" "}
            · queued by {by ?? "someone"}
            {item.editedBy && ` · edited by ${item.editedBy.name}`}
          </span>
        </span>
      ) : (
        <form
          className="grow row"
          onSubmit={(e) => {
            e.preventDefault();
            if (editing.trim()) edit.mutate({ sessionId, itemId, text: editing });
          }}
        >
          <Field label="Queued prompt text" hideLabel className="grow">
            <input value={editing} onChange={(e) => setEditing(e.target.value)} autoFocus />
          </Field>
          <Button type="submit">Save</Button>
        </form>
      )}
      {canAct && (
        <>
          {editing === null && (
            <Button variant="secondary" onClick={() => setEditing(text)}>
              Edit
            </Button>
          )}
          <Button variant="secondary" onClick={() => steer.mutate({ sessionId, itemId })} disabled={!running}>
            Steer now
          </Button>
          <Button variant="secondary" onClick={() => setRemoving(true)}>
            Remove
          </Button>
        </>
      )}
      <ErrorAlert error={failure} />
    </li>
  );
}

/** Tokens in (of which cached), out, and the cost so far. */
function SpendLine({ spend }: { spend: Spend }) {
  const n = (x: number) => x.toLocaleString("en-US");
  return (
    <span className="muted agent-spend">
      {n(spend.inputTokens)} in{spend.cachedTokens > 0 ? ` (${n(spend.cachedTokens)} cached)` : ""} · {n(spend.outputTokens)} out · {formatCost(spend.costNanos)}
    </span>
  );
}
