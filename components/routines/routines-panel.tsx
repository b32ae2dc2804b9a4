"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import type { RouterInputs, RouterOutputs } from "../api-types";
import { useTRPC } from "../trpc";
import { useRefetchOn } from "../use-refetch-on";
import { roomHref } from "../room/room-url";
import { Button } from "../ui/button";
import { ConfirmButton } from "../ui/confirm-button";
import { Field } from "../ui/field";
import { Link } from "../ui/link";
import { RelativeTime } from "../ui/relative-time";
import { Skeleton } from "../ui/skeleton";
import { ErrorAlert, InlineError } from "../ui/alert";
import { LIMITS } from "~/shared/limits";

// The room's Routines tab (SPEC.md §21): the team's scheduled prompts to its Lead, each with its
// schedule, next time, owner and runs (a run links to its prompt in the Lead's transcript);
// members create one (the next five times shown before saving), edit, pause, resume, run now and
// delete it. Read again whenever someone acts in the team.

type Routine = RouterOutputs["routines"]["list"][number];
type RoutineInput = Omit<RouterInputs["routines"]["create"], "teamId">;
type Schedule = RoutineInput["schedule"];

const MISSED = { skip: "Skip times missed while the server was down", run_once: "Run once when the server is back" } as const;
const OVERLAP = { skip: "Skip a time while the previous run still works", queue: "Queue it behind the previous run" } as const;
const RUN_STATES: Record<string, string> = {
  waiting: "Waiting in the Lead's queue",
  running: "Running",
  completed: "Completed",
  aborted: "Stopped",
  error: "Failed",
  interrupted: "Interrupted",
  budget: "Stopped by the budget",
  skipped: "Skipped",
};
const SKIPS: Record<string, string> = { missed: "its time was missed", overlap: "the previous run was still working", owner_left: "its owner can no longer prompt the team" };

export function scheduleText(s: Schedule): string {
  return s.kind === "cron" ? `cron ${s.cron} (${s.timeZone})` : `every ${s.every} ${s.every === 1 ? s.unit.replace(/s$/, "") : s.unit}`;
}

/**
 * `leadStatus`: the Lead's status in the team feed; an open run history is read again when it
 * changes (a run's prompt taken, its turn ended).
 */
export function RoutinesPanel({ teamId, canAct, latestActionId, leadStatus }: { teamId: string; canAct: boolean; latestActionId: string | null; leadStatus: string | null }) {
  const trpc = useTRPC();
  const list = useQuery(trpc.routines.list.queryOptions({ teamId }));
  useRefetchOn(list.refetch, latestActionId);
  const [adding, setAdding] = useState(false);
  return (
    <section aria-labelledby="routines-title" className="panel-section">
      <h2 id="routines-title">Routines</h2>
      <p className="muted hint">Prompts to the Lead on a schedule. Each run is its owner&apos;s prompt, with the team&apos;s budget and tool policy.</p>
      {list.error && <InlineError onRetry={() => void list.refetch()}>The routines could not be read: {list.error.message}</InlineError>}
      {!list.data && !list.error && <Skeleton label="Loading the routines…" rows={1} />}
      {list.data?.length === 0 && <p className="muted">No routines yet.</p>}
      <ul className="item-list" aria-label="Routines">
        {list.data?.map((r) => (
          <RoutineItem key={r.id} teamId={teamId} r={r} canAct={canAct} runsKey={`${leadStatus}:${latestActionId}`} onDone={() => void list.refetch()} />
        ))}
      </ul>
      {canAct &&
        (adding ? (
          <RoutineForm teamId={teamId} label="New routine" onDone={() => (setAdding(false), void list.refetch())} onCancel={() => setAdding(false)} />
        ) : (
          <Button onClick={() => setAdding(true)}>New routine</Button>
        ))}
    </section>
  );
}

function RoutineItem({ teamId, r, canAct, runsKey, onDone }: { teamId: string; r: Routine; canAct: boolean; runsKey: string; onDone: () => void }) {
  const trpc = useTRPC();
  const [editing, setEditing] = useState(false);
  const pause = useMutation(trpc.routines.setPaused.mutationOptions({ onSettled: onDone }));
  const runNow = useMutation(trpc.routines.runNow.mutationOptions({ onSettled: onDone }));
  const remove = useMutation(trpc.routines.delete.mutationOptions({ onSettled: onDone }));
  const pending = pause.isPending || runNow.isPending || remove.isPending;
  return (
    <li className="item-card" aria-label={`Routine ${r.name}`}>
      <p>
        <strong>{r.name}</strong> <span className={r.paused ? "badge" : "badge badge-working"}>{r.paused ? "Paused" : "Active"}</span>
      </p>
      <p className="item-text">{r.prompt}</p>
      <p className="muted item-meta">
        {scheduleText(r.schedule)} · owned by {r.owner.name}
        {r.nextRunAt && (
          <>
            {" "}
            · next <RelativeTime at={r.nextRunAt} />
          </>
        )}
      </p>
      <Runs teamId={teamId} routineId={r.id} refetchKey={runsKey} />
      {canAct &&
        (editing ? (
          <RoutineForm teamId={teamId} label={`Edit routine ${r.name}`} routine={r} onDone={() => (setEditing(false), onDone())} onCancel={() => setEditing(false)} />
        ) : (
          <div className="row">
            <Button variant="secondary" disabled={pending} onClick={() => runNow.mutate({ teamId, routineId: r.id })}>
              Run now
            </Button>
            <Button variant="secondary" disabled={pending} onClick={() => pause.mutate({ teamId, routineId: r.id, paused: !r.paused })}>
              {r.paused ? "Resume" : "Pause"}
            </Button>
            <Button variant="secondary" onClick={() => setEditing(true)}>
              Edit
            </Button>
            <ConfirmButton
              label={`Delete routine ${r.name}`}
              title={`Delete routine "${r.name}"?`}
              description="It will not run again; its runs so far stay in the Lead's transcript. The deletion is recorded in the audit log."
              confirm="Delete the routine"
              onConfirm={() => remove.mutate({ teamId, routineId: r.id })}
              disabled={pending}
            >
              Delete
            </ConfirmButton>
          </div>
        ))}
      <ErrorAlert error={pause.error ?? runNow.error ?? remove.error} />
    </li>
  );
}

/** A routine's runs, read when opened. */
function Runs({ teamId, routineId, refetchKey }: { teamId: string; routineId: string; refetchKey: string }) {
  const trpc = useTRPC();
  const [open, setOpen] = useState(false);
  const runs = useQuery({ ...trpc.routines.runs.queryOptions({ teamId, routineId }), enabled: open });
  const { refetch } = runs;
  useEffect(() => {
    if (open) void refetch();
  }, [open, refetch, refetchKey]);
  return (
    <details onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Runs</summary>
      {runs.error && <InlineError onRetry={() => void runs.refetch()}>The runs could not be read: {runs.error.message}</InlineError>}
      {runs.data?.length === 0 && <p className="muted">No runs yet.</p>}
      <ol className="item-history" aria-label="Runs">
        {runs.data?.map((run) => (
          <li key={run.id}>
            <RelativeTime at={run.scheduledFor} />
            {run.trigger !== "schedule" && <span className="muted"> ({run.trigger === "manual" ? "run now" : "on recovery"})</span>}: {RUN_STATES[run.state] ?? run.state}
            {run.reason && <span className="muted"> ({SKIPS[run.reason] ?? run.reason})</span>}
            {run.seq !== null && (
              <>
                {" "}
                · <Link href={roomHref(teamId, { seq: run.seq })}>its prompt in the transcript</Link>
              </>
            )}
          </li>
        ))}
      </ol>
    </details>
  );
}

const browserTimeZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

/** The form for a new routine or an edit: the next five times are shown as the schedule is typed. */
function RoutineForm({ teamId, label, routine, onDone, onCancel }: { teamId: string; label: string; routine?: Routine; onDone: () => void; onCancel: () => void }) {
  const trpc = useTRPC();
  const [name, setName] = useState(routine?.name ?? "");
  const [prompt, setPrompt] = useState(routine?.prompt ?? "");
  const [kind, setKind] = useState<Schedule["kind"]>(routine?.schedule.kind ?? "cron");
  const [cron, setCron] = useState(routine?.schedule.kind === "cron" ? routine.schedule.cron : "0 9 * * 1-5");
  const [timeZone, setTimeZone] = useState(routine?.schedule.kind === "cron" ? routine.schedule.timeZone : browserTimeZone());
  const [every, setEvery] = useState(routine?.schedule.kind === "interval" ? routine.schedule.every : 1);
  const [unit, setUnit] = useState<"minutes" | "hours">(routine?.schedule.kind === "interval" ? routine.schedule.unit : "hours");
  const [missed, setMissed] = useState<RoutineInput["missed"]>(routine?.missed ?? "skip");
  const [overlap, setOverlap] = useState<RoutineInput["overlap"]>(routine?.overlap ?? "skip");
  const schedule: Schedule = kind === "cron" ? { kind, cron: cron.trim(), timeZone: timeZone.trim() } : { kind, every, unit };
  // The preview follows the schedule once typing pauses.
  const [shown, setShown] = useState(schedule);
  const key = JSON.stringify(schedule);
  useEffect(() => {
    const t = setTimeout(() => setShown(JSON.parse(key) as Schedule), 300);
    return () => clearTimeout(t);
  }, [key]);
  const preview = useQuery({ ...trpc.routines.preview.queryOptions({ schedule: shown }), retry: false });
  const create = useMutation(trpc.routines.create.mutationOptions({ onSuccess: onDone }));
  const update = useMutation(trpc.routines.update.mutationOptions({ onSuccess: onDone }));
  const save = routine ? update : create;
  const input: RoutineInput = { name: name.trim(), prompt: prompt.trim(), schedule, missed, overlap };
  return (
    <form
      className="stack-form"
      aria-label={label}
      onSubmit={(e) => {
        e.preventDefault();
        if (routine) update.mutate({ teamId, routineId: routine.id, ...input });
        else create.mutate({ teamId, ...input });
      }}
    >
      <Field label="Name">
        <input value={name} onChange={(e) => setName(e.target.value)} maxLength={LIMITS.routineNameChars} required />
      </Field>
      <Field label="Prompt to the Lead">
        <textarea value={prompt} onChange={(e) => setPrompt(e.target.value)} rows={3} required />
      </Field>
      <Field label="Schedule">
        <select value={kind} onChange={(e) => setKind(e.target.value === "interval" ? "interval" : "cron")}>
          <option value="cron">A cron expression in a time zone</option>
          <option value="interval">Every few minutes or hours</option>
        </select>
      </Field>
      {kind === "cron" ? (
        <div className="row">
          <Field label="Cron (minute hour day month weekday)" className="grow">
            <input value={cron} onChange={(e) => setCron(e.target.value)} maxLength={100} required />
          </Field>
          <Field label="Time zone">
            <input value={timeZone} onChange={(e) => setTimeZone(e.target.value)} maxLength={64} required />
          </Field>
        </div>
      ) : (
        <div className="row">
          <Field label="Every">
            <input type="number" min={1} max={10_000} value={every} onChange={(e) => setEvery(Math.max(1, Math.round(Number(e.target.value) || 1)))} required />
          </Field>
          <Field label="Unit">
            <select value={unit} onChange={(e) => setUnit(e.target.value === "minutes" ? "minutes" : "hours")}>
              <option value="minutes">minutes</option>
              <option value="hours">hours</option>
            </select>
          </Field>
        </div>
      )}
      <div role="status" aria-live="polite" className="muted item-meta">
        {preview.error ? (
          <span className="error">{preview.error.message}</span>
        ) : preview.data ? (
          <>Next runs: {preview.data.map((d) => d.toLocaleString()).join(" · ")}</>
        ) : null}
      </div>
      <Field label="Missed times">
        <select value={missed} onChange={(e) => setMissed(e.target.value === "run_once" ? "run_once" : "skip")}>
          {Object.entries(MISSED).map(([v, text]) => (
            <option key={v} value={v}>
              {text}
            </option>
          ))}
        </select>
      </Field>
      <Field label="While the previous run works">
        <select value={overlap} onChange={(e) => setOverlap(e.target.value === "queue" ? "queue" : "skip")}>
          {Object.entries(OVERLAP).map(([v, text]) => (
            <option key={v} value={v}>
              {text}
            </option>
          ))}
        </select>
      </Field>
      <div className="row">
        <Button type="submit" disabled={save.isPending || !name.trim() || !prompt.trim()}>
          {routine ? "Save" : "Create routine"}
        </Button>
        <Button variant="secondary" onClick={onCancel}>
          Cancel
        </Button>
      </div>
      <ErrorAlert error={save.error} />
    </form>
  );
}
