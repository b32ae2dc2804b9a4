"use client";

import { useMutation } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import type { MemberView, RouterInputs } from "../api-types";
import { ModelOptions } from "../model-options";
import { spendText, useModels } from "../models";
import { SPLIT_MAX } from "./room-url";
import { agentStatus } from "./agent-status";
import { StatusBadge } from "../status-badge";
import { useTRPC } from "../trpc";
import { LIMITS } from "~/shared/limits";
import { Button } from "../ui/button";
import { ErrorAlert } from "../ui/alert";
import { Check, Field } from "../ui/field";

type TeammateContext = NonNullable<RouterInputs["team"]["addTeammate"]["context"]>;

/**
 * The Lead and every teammate with live status and who added it; selecting one shows its
 * transcript, ticking "split" puts it beside the others in the split view.
 */
export function Roster({
  teamId,
  members,
  selected,
  canAct,
  onSelect,
  split,
  onToggleSplit,
  budgetReached,
}: {
  teamId: string;
  members: MemberView[];
  /** The team's budget is reached: idle members show as paused. */
  budgetReached: boolean;
  selected: string;
  /** Members and owners add teammates; viewers only watch. */
  canAct: boolean;
  onSelect: (name: string) => void;
  /** The members shown side by side in the split view; each has a box that adds or removes it. */
  split: readonly string[];
  onToggleSplit: (name: string) => void;
}) {
  const { labelOf } = useModels();
  return (
    <section aria-label="Roster" className="roster">
      <h2>Team</h2>
      <ul>
        {members.map((m) => (
          <li key={m.name}>
            <Button
             
              className={`member${m.name === selected ? " selected" : ""}`}
              aria-pressed={m.name === selected}
              onClick={() => onSelect(m.name)}
            >
              <span className="member-head">
                <span>
                  <strong>{m.name}</strong> <span className="muted member-role">({m.role})</span>
                </span>
                <StatusBadge status={agentStatus(m, { budgetReached })} inert />
              </span>
              {m.lastError && (
                <span className="error member-error" role="note" title={m.lastError}>
                  Last turn failed: {m.lastError}
                </span>
              )}
              <span className="muted member-meta">
                {labelOf(m.model)}
                {m.context === "fork" ? " · started from the Lead's work" : ""}
                {m.addedBy && ` · added by ${m.addedBy.name}`}
              </span>
              <span className="muted member-spend">{spendText(m.spend)}</span>
              {m.description && <span className="member-desc">{m.description}</span>}
              {m.diagnostic && (
                <span className="error member-desc" role="note">
                  {m.diagnostic}
                </span>
              )}
            </Button>
            <Check
              className="split-toggle"
              checked={split.includes(m.name)}
              disabled={!split.includes(m.name) && split.length >= SPLIT_MAX}
              onChange={() => onToggleSplit(m.name)}
              aria-label={`Show ${m.name} in the split view`}
            >
              <span aria-hidden="true">in the split view</span>
            </Check>
          </li>
        ))}
      </ul>
      {canAct && <AddTeammate teamId={teamId} lead={members[0]} />}
    </section>
  );
}

const EMPTY_FORM = { name: "", description: "", prompt: "", context: "fresh" as TeammateContext, model: "" };

function AddTeammate({ teamId, lead }: { teamId: string; lead: MemberView | undefined }) {
  const trpc = useTRPC();
  const { options, labelOf } = useModels();
  const [open, setOpen] = useState(false);
  // model "": the Lead's (the server's default for a spawn that names none).
  const [form, setForm] = useState(EMPTY_FORM);
  const add = useMutation(
    trpc.team.addTeammate.mutationOptions({
      onSuccess: () => {
        setForm(EMPTY_FORM);
        setOpen(false);
      },
    }),
  );
  function submit(e: FormEvent) {
    e.preventDefault();
    const { model, ...rest } = form;
    add.mutate({ teamId, ...rest, ...(model ? { model } : {}) });
  }
  if (!open) {
    return (
      <Button variant="secondary" onClick={() => setOpen(true)}>
        Add a teammate
      </Button>
    );
  }
  return (
    <form className="add-teammate" onSubmit={submit} aria-label="Add a teammate">
      <Field label="Name (kebab-case)">
        <input value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} required maxLength={LIMITS.memberNameChars} />
      </Field>
      <Field label="Description">
        <input value={form.description} onChange={(e) => setForm({ ...form, description: e.target.value })} required maxLength={LIMITS.memberDescriptionChars} />
      </Field>
      <Field label="First task">
        <textarea value={form.prompt} onChange={(e) => setForm({ ...form, prompt: e.target.value })} required rows={3} />
      </Field>
      <Field label="Context">
        <select value={form.context} onChange={(e) => setForm({ ...form, context: e.target.value === "fork" ? "fork" : "fresh" })}>
          <option value="fresh">fresh (empty history)</option>
          <option value="fork">fork (the Lead&apos;s completed turns)</option>
        </select>
      </Field>
      <Field label="Model">
        <select value={form.model} onChange={(e) => setForm({ ...form, model: e.target.value })}>
          <option value="">the Lead&apos;s{lead ? ` (${labelOf(lead.model)})` : ""}</option>
          <ModelOptions options={options} />
        </select>
      </Field>
      <div className="row">
        <Button type="submit" disabled={add.isPending}>
          Add
        </Button>
        <Button variant="secondary" onClick={() => setOpen(false)}>
          Cancel
        </Button>
      </div>
      <ErrorAlert error={add.error} />
    </form>
  );
}
