"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import type { MemoryView as Memory } from "../api-types";
import { useTRPC } from "../trpc";
import { useRefetchOn } from "../use-refetch-on";
import { useAccountStatus } from "../account/use-account";
import { roomHref } from "../room/room-url";
import { LIMITS } from "~/shared/limits";
import { Button } from "../ui/button";
import { ConfirmButton } from "../ui/confirm-button";
import { Field } from "../ui/field";
import { Link } from "../ui/link";
import { RelativeTime } from "../ui/relative-time";
import { SettingCheckbox } from "../ui/setting-checkbox";
import { Skeleton } from "../ui/skeleton";
import { ErrorAlert, InlineError } from "../ui/alert";

// The room's Memory tab (SPEC.md §20): proposals waiting for a decision (approve, edit then
// approve, reject with a note), then the approved memories, each with its source (the step
// that proposed it, a link that opens the transcript there), who approved it and when, its
// earlier versions; members edit and delete them, owners set how the team uses memory. Both
// lists are read again whenever the team feed says the team's memory changed.

export function MemoryPanel({ teamId, canAct, isOwner, lastChange }: { teamId: string; canAct: boolean; isOwner: boolean; lastChange: number }) {
  const trpc = useTRPC();
  const proposed = useQuery(trpc.memory.list.queryOptions({ teamId, status: "proposed" }));
  const approved = useQuery(trpc.memory.list.queryOptions({ teamId, status: "approved" }));
  const instanceOwner = useAccountStatus().data?.me?.instanceOwner ?? false;
  useRefetchOn(proposed.refetch, lastChange);
  useRefetchOn(approved.refetch, lastChange);
  const refetch = () => {
    void proposed.refetch();
    void approved.refetch();
  };
  return (
    <section aria-labelledby="memory-title" className="panel-section">
      <h2 id="memory-title">Memory</h2>
      <p className="muted hint">
        What this team remembers beyond one prompt. Agents propose memories with <code>memory_propose</code>; once a person approves one, agents find it
        with <code>memory_search</code> and it enters their context when it is relevant to their work.
      </p>
      {isOwner && <MemorySettings teamId={teamId} />}
      <section aria-labelledby="memory-proposed-title">
        <h3 id="memory-proposed-title">Waiting for a decision{proposed.data?.length ? ` (${proposed.data.length})` : ""}</h3>
        {proposed.error && <InlineError onRetry={refetch}>The proposals could not be read: {proposed.error.message}</InlineError>}
        {!proposed.data && !proposed.error && <Skeleton label="Loading the proposals…" rows={1} />}
        {proposed.data?.length === 0 && <p className="muted">No proposals waiting.</p>}
        <ul className="item-list" aria-label="Proposed memories">
          {proposed.data?.map((m) => (
            <li key={m.id} className="item-card" aria-label={`Proposed memory: ${m.text.slice(0, 60)}`}>
              <MemoryBody m={m} />
              {canAct && <DecideMemory teamId={teamId} memoryId={m.id} proposal={m} onDone={refetch} />}
            </li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="memory-approved-title">
        <h3 id="memory-approved-title">Approved{approved.data?.length ? ` (${approved.data.length})` : ""}</h3>
        {approved.error && <InlineError onRetry={refetch}>The memories could not be read: {approved.error.message}</InlineError>}
        {!approved.data && !approved.error && <Skeleton label="Loading the memories…" rows={2} />}
        {approved.data?.length === 0 && <p className="muted">Nothing remembered yet.</p>}
        <ul className="item-list" aria-label="Approved memories">
          {approved.data?.map((m) => (
            <li key={m.id} className="item-card" aria-label={`Memory: ${m.text.slice(0, 60)}`}>
              <MemoryBody m={m} />
              <p className="muted item-meta">
                {m.decidedBy && "auto" in m.decidedBy ? "Approved as proposed (the team approves proposals automatically)" : `Approved by ${m.decidedBy?.name ?? "someone"}`}{" "}
                {m.decidedAt && <RelativeTime at={m.decidedAt} />}
                {m.version > 1 && ` · version ${m.version}`}
              </p>
              {m.version > 1 && <Versions teamId={teamId} memoryId={m.id} />}
              {canAct && <Manage teamId={teamId} m={m} onDone={refetch} canShare={instanceOwner} />}
            </li>
          ))}
        </ul>
      </section>
    </section>
  );
}

/** A memory's text, tags and source: the member's step (a link into its transcript, in its own team) or the person. */
export function MemoryBody({ m }: { m: Memory }) {
  const by = m.proposedBy;
  const sourceTeam = by.kind === "member" ? (by.teamId ?? m.teamId) : null;
  return (
    <>
      <p className="item-text">{m.text}</p>
      {m.tags.length > 0 && (
        <p className="memory-tags" aria-label="Tags">
          {m.tags.map((t) => (
            <span key={t} className="tag">
              {t}
            </span>
          ))}
        </p>
      )}
      <p className="muted item-meta">
        {by.kind === "member" ? (
          <>
            Proposed by {by.name}
            {by.seq !== null && sourceTeam && (
              <>
                {" "}
                at <Link href={roomHref(sourceTeam, { member: by.name, seq: by.seq })}>step {by.seq} of its transcript</Link>
              </>
            )}
          </>
        ) : (
          <>Proposed by {by.name}</>
        )}{" "}
        <RelativeTime at={m.createdAt} />
      </p>
    </>
  );
}

const tagsOf = (text: string) =>
  text
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);

/** An edit of a memory's text and tags, from `initial`: `submit` with the edit, or cancel. */
function EditForm({
  label,
  initial,
  submitLabel,
  submit,
  onCancel,
  pending,
  error,
}: {
  label: string;
  initial: { text: string; tags: string[] };
  submitLabel: string;
  submit: (edit: { text: string; tags: string[] }) => void;
  onCancel: () => void;
  pending: boolean;
  error: { message: string } | null;
}) {
  const [text, setText] = useState(initial.text);
  const [tags, setTags] = useState(initial.tags.join(", "));
  return (
    <form
      className="stack-form"
      aria-label={label}
      onSubmit={(e) => {
        e.preventDefault();
        submit({ text: text.trim(), tags: tagsOf(tags) });
      }}
    >
      <Field label="Memory">
        <textarea value={text} onChange={(e) => setText(e.target.value)} rows={3} maxLength={LIMITS.memoryTextBytes} required />
      </Field>
      <Field label="Tags (comma-separated)">
        <input value={tags} onChange={(e) => setTags(e.target.value)} maxLength={LIMITS.memoryTags * (LIMITS.memoryTagChars + 2)} />
      </Field>
      <div className="row">
        <Button type="submit" disabled={pending || !text.trim()}>
          {submitLabel}
        </Button>
        <Button variant="secondary" onClick={onCancel}>
          Cancel
        </Button>
      </div>
      <ErrorAlert error={error} />
    </form>
  );
}

/**
 * Approve, edit then approve (when the proposal's text is at hand), or reject with a note; the
 * first decision wins (another person's shows as an error). The Memory tab and the inbox use it.
 */
export function DecideMemory({ teamId, memoryId, proposal, onDone }: { teamId: string; memoryId: string; proposal?: { text: string; tags: string[] }; onDone?: () => void }) {
  const trpc = useTRPC();
  const [note, setNote] = useState("");
  const [editing, setEditing] = useState(false);
  const decide = useMutation(trpc.memory.decide.mutationOptions({ onSettled: onDone }));
  const send = (approve: boolean, edit?: { text: string; tags: string[] }) => decide.mutate({ teamId, memoryId, approve, note: note.trim() || undefined, edit });
  if (editing && proposal)
    return (
      <EditForm
        label="Edit, then approve"
        initial={proposal}
        submitLabel="Approve as edited"
        submit={(edit) => send(true, edit)}
        onCancel={() => setEditing(false)}
        pending={decide.isPending}
        error={decide.error}
      />
    );
  return (
    <div className="memory-actions">
      <div className="row">
        <Field label="Note about this memory" hideLabel className="grow">
          <input value={note} onChange={(e) => setNote(e.target.value)} placeholder="Note (optional)" maxLength={LIMITS.decisionNoteChars} />
        </Field>
        <Button disabled={decide.isPending} onClick={() => send(true)}>
          Approve memory
        </Button>
        {proposal && (
          <Button variant="secondary" disabled={decide.isPending} onClick={() => setEditing(true)}>
            Edit, then approve
          </Button>
        )}
        <Button variant="danger" disabled={decide.isPending} onClick={() => send(false)}>
          Reject
        </Button>
      </div>
      <ErrorAlert error={decide.error} />
    </div>
  );
}

/** A team's approved memory: members edit and delete it, the instance's owner also shares it with every team. */
function Manage({ teamId, m, onDone, canShare }: { teamId: string; m: Memory; onDone: () => void; canShare: boolean }) {
  const trpc = useTRPC();
  const edit = useMutation(trpc.memory.edit.mutationOptions({ onSettled: onDone }));
  const remove = useMutation(trpc.memory.delete.mutationOptions({ onSettled: onDone }));
  const share = useMutation(trpc.memory.share.mutationOptions());
  return (
    <MemoryControls
      m={m}
      save={(e) => edit.mutateAsync({ teamId, memoryId: m.id, ...e })}
      remove={() => remove.mutate({ teamId, memoryId: m.id })}
      pending={edit.isPending || remove.isPending}
      error={edit.error ?? remove.error ?? share.error}
    >
      {canShare &&
        (share.data ? (
          <span role="status" className="muted">
            Shared with every team
          </span>
        ) : (
          <Button variant="secondary" disabled={share.isPending} onClick={() => share.mutate({ teamId, memoryId: m.id })}>
            Share with every team
          </Button>
        ))}
    </MemoryControls>
  );
}

/**
 * Edit (the text it had becomes a version) or delete (recorded in the audit log) an approved
 * memory: a team's (Memory tab) or the instance's shared one (Account page).
 */
export function MemoryControls({
  m,
  save,
  remove,
  pending,
  error,
  children,
}: {
  m: Memory;
  save: (edit: { text: string; tags: string[] }) => Promise<unknown>;
  remove: () => void;
  pending: boolean;
  error: { message: string } | null;
  children?: ReactNode;
}) {
  const [editing, setEditing] = useState(false);
  if (editing)
    return (
      <EditForm
        label="Edit the memory"
        initial={m}
        submitLabel="Save"
        submit={(edit) =>
          void save(edit)
            .then(() => setEditing(false))
            .catch(() => undefined)
        }
        onCancel={() => setEditing(false)}
        pending={pending}
        error={error}
      />
    );
  return (
    <div className="memory-actions">
      <div className="row">
        <Button variant="secondary" onClick={() => setEditing(true)}>
          Edit
        </Button>
        <ConfirmButton
          title="Delete this memory?"
          description="Agents will no longer find it or see it in their context. The deletion is recorded in the audit log."
          confirm="Delete the memory"
          onConfirm={remove}
          disabled={pending}
        >
          Delete
        </ConfirmButton>
        {children}
      </div>
      <ErrorAlert error={error} />
    </div>
  );
}

/** A memory's earlier texts, read when opened. */
function Versions({ teamId, memoryId }: { teamId: string; memoryId: string }) {
  const trpc = useTRPC();
  const [open, setOpen] = useState(false);
  const versions = useQuery({ ...trpc.memory.versions.queryOptions({ teamId, memoryId }), enabled: open });
  return (
    <details onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Earlier versions</summary>
      {versions.error && <InlineError onRetry={() => void versions.refetch()}>The versions could not be read: {versions.error.message}</InlineError>}
      <ol className="item-history">
        {versions.data?.map((v) => (
          <li key={v.version}>
            <span className="muted">
              Version {v.version}, replaced by {v.editedBy.name} <RelativeTime at={v.editedAt} />:
            </span>{" "}
            {v.text}
          </li>
        ))}
      </ol>
    </details>
  );
}

/** How much of each agent's context the relevant memories may take (tokens). */
const CONTEXT_TOKENS = [0, 250, 500, 1000, 2000, 4000] as const;

/** The owner's settings: approve proposals as they come; read the instance's shared memory; the context bound. */
function MemorySettings({ teamId }: { teamId: string }) {
  const trpc = useTRPC();
  const settings = useQuery(trpc.memory.settings.queryOptions({ teamId }));
  const save = useMutation(trpc.memory.setSettings.mutationOptions({ onSettled: () => void settings.refetch() }));
  if (!settings.data) return settings.error ? <InlineError onRetry={() => void settings.refetch()}>The memory settings could not be read: {settings.error.message}</InlineError> : null;
  const saved = settings.data;
  return (
    <fieldset className="memory-settings">
      <legend>Settings</legend>
      <SettingCheckbox saved={saved.autoApprove} pending={save.isPending} save={(autoApprove) => save.mutateAsync({ teamId, autoApprove })}>
        Approve agents&apos; proposals as they come
      </SettingCheckbox>
      <SettingCheckbox saved={saved.shared} pending={save.isPending} save={(shared) => save.mutateAsync({ teamId, shared })}>
        Agents also read the instance&apos;s shared memory
      </SettingCheckbox>
      <Field label="Relevant memories in each agent's context">
        <select value={saved.contextTokens} disabled={save.isPending} onChange={(e) => save.mutate({ teamId, contextTokens: Number(e.target.value) })}>
          {[...new Set([...CONTEXT_TOKENS, saved.contextTokens])]
            .sort((a, b) => a - b)
            .map((t) => (
              <option key={t} value={t}>
                {t === 0 ? "None (agents still search)" : `Up to about ${t.toLocaleString("en")} tokens`}
              </option>
            ))}
        </select>
      </Field>
      <ErrorAlert error={save.error} />
    </fieldset>
  );
}
