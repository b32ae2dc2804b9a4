"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc";
import { RelativeTime } from "../ui/relative-time";
import { useRefetchOn } from "../use-refetch-on";
import { LIMITS } from "~/shared/limits";
import { Button } from "../ui/button";
import { ErrorAlert } from "../ui/alert";
import { Field } from "../ui/field";

// The Lead's plans waiting for a person (plan approval, SPEC.md §17): its tasks, with Approve
// (they may start) and Revise (the note goes to the Lead). Shown beside "Waiting for people" to
// everyone; members and owners decide on what they read (a plan changed since is refused).
// Read again whenever the board changes or someone acts.

export function PlanApproval({ teamId, boardKey, actionKey, canAct }: { teamId: string; boardKey: unknown; actionKey: unknown; canAct: boolean }) {
  const trpc = useTRPC();
  const plans = useQuery(trpc.approvals.plans.queryOptions({ teamId }));
  const { refetch } = plans;
  // A board change may add to a plan; a person's decision is an action.
  useRefetchOn(refetch, boardKey);
  useRefetchOn(refetch, actionKey);
  if (!plans.data || plans.data.length === 0) return null;
  return (
    <section className="waiting" aria-labelledby="plans-title">
      <h2 id="plans-title">
        Plans waiting for approval <span className="badge badge-waiting-for-approval">{plans.data.length}</span>
      </h2>
      <ul>
        {plans.data.map((p) => (
          <li key={p.id} className="waiting-item" aria-label={`The Lead's plan of ${p.tasks.length} tasks`}>
            <p className="waiting-what">
              <strong>The Lead</strong> proposes {p.tasks.length === 1 ? "a task" : `${p.tasks.length} tasks`}{" "}
              <span className="muted waiting-meta">
                <RelativeTime at={p.createdAt} />
              </span>
            </p>
            <ol className="plan-tasks">
              {p.tasks.map((t) => (
                <li key={t.id}>
                  <code>{t.id}</code> {t.subject}
                </li>
              ))}
            </ol>
            {canAct && <Decide teamId={teamId} planId={p.id} seen={p.tasks} onDone={() => void refetch()} />}
          </li>
        ))}
      </ul>
    </section>
  );
}

function Decide({ teamId, planId, seen, onDone }: { teamId: string; planId: string; seen: { id: string; revision: number }[]; onDone: () => void }) {
  const trpc = useTRPC();
  const [note, setNote] = useState("");
  const decide = useMutation(trpc.approvals.decidePlan.mutationOptions({ onSuccess: onDone }));
  const send = (approve: boolean) => decide.mutate({ teamId, planId, approve, note: note.trim() || undefined, seen: seen.map(({ id, revision }) => ({ id, revision })) });
  return (
    <>
      <div className="row waiting-actions">
        <Field label="Note to the Lead about its plan" hideLabel className="grow">
          <input value={note} onChange={(e) => setNote(e.target.value)} placeholder="Note (needed to revise)" maxLength={LIMITS.decisionNoteChars} />
        </Field>
        <Button disabled={decide.isPending} onClick={() => send(true)}>
          Approve plan
        </Button>
        <Button variant="secondary" disabled={decide.isPending || note.trim() === ""} onClick={() => send(false)}>
          Revise
        </Button>
      </div>
      <ErrorAlert error={decide.error} />
    </>
  );
}
