"use client";

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import type { ChangedBy, MemberView, TaskAction, TaskUpdate, TaskView } from "../api-types";
import { appCodeOf } from "../app-error";
import { taskAnchor } from "./room-keys";
import { useReportEditing } from "../people/use-presence";
import { useTRPC } from "../trpc";
import { LIMITS } from "~/shared/limits";
import { Button } from "../ui/button";
import { Field } from "../ui/field";

/** Fields an action may carry, and the revision the person saw when it is not the task's current one. */
type ActExtra = Pick<TaskUpdate, "owner" | "subject"> & { seenRevision?: number };

const COLUMNS = [
  { status: "pending", title: "Pending" },
  { status: "in_progress", title: "In progress" },
  { status: "completed", title: "Completed" },
] as const;

/** Why the last update was not applied: a stale revision (shown with the current task), or another refusal. */
type Refusal = { kind: "conflict"; taskId: string; message: string } | { kind: "failed"; message: string };

/** An edit in progress, with the revision the person started from; `stale`: a save met a newer revision. */
type Editing = { taskId: string; subject: string; revision: number; stale?: boolean };

/**
 * The board, live. A person acts with Lead authority and always sends the revision they saw;
 * when someone changed the task first, the conflict is shown with the current task, and
 * nothing is overwritten. Any other refusal shows its message. Every task shows who changed it
 * last; a viewer sees the board without its controls.
 */
export function TaskBoard({ teamId, tasks, members, canAct }: { teamId: string; tasks: TaskView[]; members: MemberView[]; canAct: boolean }) {
  const trpc = useTRPC();
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  // Kept here, not in the card: a card remounts when its task moves to another column.
  const [editing, setEditing] = useState<Editing | null>(null);
  useReportEditing(editing ? { kind: "task", taskId: editing.taskId } : null);
  const update = useMutation(
    trpc.team.updateTask.mutationOptions({
      onMutate: () => setRefusal(null),
      onSuccess: (_, vars) => {
        if (vars.action === "edit") setEditing(null);
      },
      onError: (e, vars) => {
        const stale = appCodeOf(e) === "TEAM_TASK_STALE_REVISION";
        // A stale edit keeps the person's text open beside the other version (TaskCard).
        if (stale && vars.action === "edit") return setEditing((ed) => (ed && ed.taskId === vars.taskId ? { ...ed, stale: true } : ed));
        setRefusal(stale ? { kind: "conflict", taskId: vars.taskId, message: e.message } : { kind: "failed", message: e.message });
      },
    }),
  );
  const live = tasks.filter((t) => t.status !== "deleted");
  const deleted = tasks.length - live.length;
  const current = refusal?.kind === "conflict" ? tasks.find((t) => t.id === refusal.taskId) : undefined;

  function act(task: TaskView, action: TaskAction, extra: ActExtra = {}) {
    const { seenRevision, ...fields } = extra;
    update.mutate({ teamId, taskId: task.id, expectedRevision: seenRevision ?? task.revision, action, ...fields });
  }

  return (
    <section aria-label="Task board" className="board">
      <h2>Tasks</h2>
      {refusal && (
        <div role="alert" className="conflict">
          <strong>Not applied:</strong> {refusal.message}
          {current && (
            <p>
              Current: {current.id} “{current.subject}” is {current.status.replace("_", " ")} at revision {current.revision}
              {current.ownerName ? `, owned by ${current.ownerName}` : ""}.
            </p>
          )}
          <Button variant="secondary" onClick={() => setRefusal(null)}>
            Dismiss
          </Button>
        </div>
      )}
      {live.length === 0 && <p className="muted">No tasks yet. Teammates put their work here.</p>}
      <div className="columns">
        {COLUMNS.map((col) => {
          const inCol = live.filter((t) => t.status === col.status);
          return (
            <section key={col.status} aria-label={`${col.title} tasks`} className="column">
              <h3 className="label">
                {col.title} ({inCol.length})
              </h3>
              <ul>
                {inCol.map((t) => (
                  <TaskCard
                    key={t.id}
                    task={t}
                    members={members}
                    onAct={canAct ? act : null}
                    editing={editing?.taskId === t.id ? editing : null}
                    setEditing={setEditing}
                  />
                ))}
              </ul>
            </section>
          );
        })}
      </div>
      {deleted > 0 && <p className="muted">{deleted} deleted task{deleted === 1 ? "" : "s"} kept as tombstones.</p>}
    </section>
  );
}

function TaskCard({
  task,
  members,
  onAct,
  editing,
  setEditing,
}: {
  task: TaskView;
  members: MemberView[];
  /** Null for a viewer: the card has no controls. */
  onAct: ((task: TaskView, action: TaskAction, extra?: ActExtra) => void) | null;
  editing: Editing | null;
  setEditing: (e: Editing | null) => void;
}) {
  // An edit is sent with the revision the person started editing, so a change made by someone
  // else meanwhile shows up as a conflict instead of being overwritten.
  const assignable = members.filter((m) => m.phase === "active");
  return (
    <li className="task" id={taskAnchor(task.id)} tabIndex={-1} aria-label={`${task.id} ${task.subject}`}>
      <div className="task-head">
        <span className="task-id">{task.id}</span>
        {task.ready && <span className="badge badge-ready">ready</span>}
        <span className="muted">rev {task.revision}</span>
      </div>
      {editing === null || !onAct ? (
        <div className="task-subject">{task.subject}</div>
      ) : editing.stale ? (
        <div role="alert" className="conflict" aria-label={`${task.id} changed while you edited it`}>
          <p>
            <strong>{task.id} changed while you edited it</strong> (now revision {task.revision}
            {task.changedBy ? `, ${changedByText(task.changedBy)}` : ""}). Your text is kept.
          </p>
          <dl className="versions">
            <dt>Theirs</dt>
            <dd>{task.subject}</dd>
            <dt>Yours</dt>
            <dd>{editing.subject}</dd>
          </dl>
          <div className="task-actions">
            <Button onClick={() => onAct(task, "edit", { subject: editing.subject, seenRevision: task.revision })}>
              Keep mine
            </Button>
            <Button variant="secondary" onClick={() => setEditing(null)}>
              Take theirs
            </Button>
          </div>
        </div>
      ) : (
        <form
          className="task-editor"
          onSubmit={(e) => {
            e.preventDefault();
            if (editing.subject.trim()) onAct(task, "edit", { subject: editing.subject.trim(), seenRevision: editing.revision });
          }}
          onKeyDown={(e) => {
            if (e.key === "Escape") setEditing(null);
          }}
        >
          <Field label={`Subject of ${task.id}`} hideLabel>
            <input
              value={editing.subject}
              onChange={(e) => setEditing({ ...editing, subject: e.target.value })}
              autoFocus
              maxLength={LIMITS.taskSubjectChars}
            />
          </Field>
          <div className="task-actions">
            <Button type="submit" disabled={!editing.subject.trim()}>
              Save
            </Button>
            <Button variant="secondary" onClick={() => setEditing(null)}>
              Cancel
            </Button>
          </div>
        </form>
      )}
      <div className="muted task-meta">
        {task.ownerName ? `owner: ${task.ownerName}` : "unowned"}
        {task.blockedBy.length > 0 && ` · waits for ${task.blockedBy.join(", ")}`}
        {task.writeScopes.length > 0 && ` · scopes: ${task.writeScopes.join(", ")}`}
        {task.changedBy && ` · ${changedByText(task.changedBy)}`}
      </div>
      {task.warnings.map((w) => (
        <div key={`${w.taskId}-${w.scope}`} className="warning" role="note">
          Write scope {w.scope} overlaps {w.taskId} ({w.otherScope})
        </div>
      ))}
      {onAct && (
        <div className="task-actions">
          {task.status === "pending" && (
            <Button variant="secondary" onClick={() => onAct(task, "claim")} aria-label={`Claim ${task.id}`}>
              Claim
            </Button>
          )}
          {task.status === "in_progress" && (
            <>
              <Button variant="secondary" onClick={() => onAct(task, "complete")} aria-label={`Complete ${task.id}`}>
                Complete
              </Button>
              <Button variant="secondary" onClick={() => onAct(task, "release")} aria-label={`Release ${task.id}`}>
                Release
              </Button>
            </>
          )}
          {task.status === "completed" && (
            <Button variant="secondary" onClick={() => onAct(task, "reopen")} aria-label={`Reopen ${task.id}`}>
              Reopen
            </Button>
          )}
          {task.status !== "completed" && (
            <Field label={`Assign ${task.id}`} hideLabel className="assign">
              <select
                value=""
                onChange={(e) => onAct(task, "reassign", { owner: e.target.value === "-" ? null : e.target.value })}
              >
                <option value="">Assign…</option>
                {assignable.map((m) => (
                  <option key={m.name} value={m.name}>
                    {m.name}
                  </option>
                ))}
                <option value="-">Unassign</option>
              </select>
            </Field>
          )}
          <Button variant="secondary" onClick={() => setEditing({ taskId: task.id, subject: task.subject, revision: task.revision })} aria-label={`Edit ${task.id}`}>
            Edit
          </Button>
          <Button variant="danger" onClick={() => onAct(task, "delete")} aria-label={`Delete ${task.id}`}>
            Delete
          </Button>
        </div>
      )}
    </li>
  );
}

/** Who made a task's last change: a person in the room, or an agent (by member name). */
function changedByText(by: ChangedBy): string {
  return by.kind === "person" ? `changed by ${by.name}` : `changed by agent ${by.name}`;
}
