"use client";

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import type { ApiError, FileChange } from "../api-types";
import { useTRPC } from "../trpc";
import { DiffTable } from "./file-diff";
import { fileErrorText, staleOf } from "./file-errors";
import { CodeView } from "./file-viewer";
import { authorText } from "./tree-model";
import { useFileContent } from "./use-workspace";
import { Button } from "../ui/button";
import { Alert } from "../ui/alert";
import { Field } from "../ui/field";

// Changing files from the browser (members and owners). Every change sends the version the
// person saw (0: "there is no file here"); when the file moved on meanwhile, the server refuses
// it (WORKSPACE_STALE_VERSION) and the conflict panel shows the current content and how the
// person's text differs from it. Only a deliberate second send, with the current version,
// overwrites: never a silent one.

export type ChangeKind = "created" | "saved" | "deleted";
export interface ChangeDone {
  kind: ChangeKind;
  result: FileChange;
}

/** What the last change did, and the write-scope warnings it raised. */
export function ChangeNotice({ done, onDismiss }: { done: ChangeDone; onDismiss: () => void }) {
  const { kind, result } = done;
  const text = result.unchanged
    ? `No change: the text equals ${result.path} v${result.version}.`
    : kind === "deleted"
      ? `Deleted ${result.path} (v${result.version} records the deletion).`
      : `${kind === "created" ? "Created" : "Saved"} ${result.path} as v${result.version}.`;
  return (
    <div className="change-notice">
      <p role="status">{text}</p>
      {result.warnings.map((w) => (
        <p key={w} className="warning" role="note">
          <span aria-hidden="true">⚠ </span>Write-scope warning: {w}
        </p>
      ))}
      <Button variant="link" onClick={onDismiss}>
        Dismiss
      </Button>
    </div>
  );
}

/**
 * A refused change: the file is at `current` now (0: no file), not at `seen`. Shows the current
 * content and, for a write, a diff from it to the person's text (`mine`; null for a delete).
 */
function ConflictPanel({
  teamId,
  path,
  seen,
  current,
  mine,
  onReload,
  onRetry,
  retrying,
}: {
  teamId: string;
  path: string;
  seen: number;
  current: number;
  mine: string | null;
  onReload: () => void;
  onRetry: (expectedVersion: number) => void;
  retrying: boolean;
}) {
  const now = useFileContent(teamId, path, current || null, 0, current > 0);
  const file = current > 0 ? now.data : undefined;
  const deleting = mine === null;
  const what = deleting ? "Not deleted" : seen === 0 ? "Not created" : "Not saved";
  const why =
    current === 0
      ? `${path} was deleted after you opened v${seen}.`
      : seen === 0
        ? `${path} already exists: it is at v${current}.`
        : `${path} changed after you opened v${seen}: it is at v${current} now.`;
  return (
    <div role="alert" className="conflict file-conflict" aria-label="Conflict">
      <p>
        <strong>{what}:</strong> {why}
        {file && ` The current version was written by ${authorText(file.author)} at ${file.changedAt.toLocaleString()}.`} Nothing was
        overwritten.
      </p>
      {current > 0 && (
        <section aria-label="Current content">
          <h4 className="label">Current content (v{current})</h4>
          {file ? <CodeView content={file.content} label={`Current content of ${path} v${current}`} /> : now.error ? <p className="error">{now.error.message}</p> : <p className="muted">Loading…</p>}
        </section>
      )}
      {!deleting && file && (
        <section aria-label="Your changes compared with the current version">
          <h4 className="label">Your text compared with v{current}</h4>
          <DiffTable before={file.content} after={mine} label={`Your text compared with v${current}`} />
        </section>
      )}
      <div className="row-tight">
        <Button variant="secondary" onClick={onReload}>
          {seen === 0 && current > 0 ? "Open the existing file" : "Reload the current version"}
        </Button>
        {!(deleting && current === 0) && (
          <Button variant="danger" disabled={retrying} onClick={() => onRetry(current)}>
            {deleting ? `Delete v${current} anyway` : current === 0 ? "Save my text as the file again" : `Overwrite v${current} with my text`}
          </Button>
        )}
      </div>
    </div>
  );
}

/** Editing a file opened at version `base`: the save sends `base`, a later version makes a conflict. */
export function FileEditor({
  teamId,
  path,
  base,
  initial,
  latest,
  onSaved,
  onReload,
  onCancel,
}: {
  teamId: string;
  path: string;
  base: number;
  initial: string;
  /** The file's latest version as the room sees it now (null: no live file). */
  latest: number | null;
  onSaved: (done: ChangeDone) => void;
  onReload: () => void;
  onCancel: () => void;
}) {
  const trpc = useTRPC();
  const [text, setText] = useState(initial);
  const write = useMutation(trpc.workspace.write.mutationOptions({ onSuccess: (result) => onSaved({ kind: "saved", result }) }));
  const stale = staleOf(write.error);
  const save = (expectedVersion: number) => write.mutate({ teamId, path, content: text, expectedVersion });
  return (
    <>
      <form
        aria-label={`Edit ${path}`}
        className="file-editor"
        onSubmit={(e) => {
          e.preventDefault();
          save(base);
        }}
      >
        {latest !== base && !stale && (
          <p className="warning" role="note">
            {latest === null ? `${path} was deleted` : `${path} is at v${latest} now`} since you opened v{base}: saving will show the conflict.
          </p>
        )}
        <Field label={`Content of ${path} (opened at v${base})`}>
          <textarea className="code-input" value={text} onChange={(e) => setText(e.target.value)} rows={16} spellCheck={false} autoFocus />
        </Field>
        <div className="row-tight">
          <Button type="submit" disabled={write.isPending}>
            Save
          </Button>
          <Button variant="secondary" onClick={onCancel}>
            Cancel
          </Button>
        </div>
      </form>
      <WriteRefusal teamId={teamId} path={path} seen={base} mine={text} write={write} onReload={onReload} onRetry={save} />
    </>
  );
}

/** Why a save was refused: a stale version shows the conflict, anything else a sentence. */
function WriteRefusal({
  teamId,
  path,
  seen,
  mine,
  write,
  onReload,
  onRetry,
}: {
  teamId: string;
  path: string;
  seen: number;
  mine: string;
  write: { error: ApiError | null; isPending: boolean };
  /** Takes the current version instead (of the path the conflict names). */
  onReload: (path: string) => void;
  onRetry: (expectedVersion: number) => void;
}) {
  const stale = staleOf(write.error);
  if (stale) {
    const at = stale.path ?? path;
    return (
      <ConflictPanel
        teamId={teamId}
        path={at}
        seen={seen}
        current={stale.currentVersion}
        mine={mine}
        onReload={() => onReload(at)}
        onRetry={onRetry}
        retrying={write.isPending}
      />
    );
  }
  return write.error ? (
    <Alert>
      {fileErrorText(write.error)}
    </Alert>
  ) : null;
}

/** A new file: path and content, sent with version 0 ("no file here yet"). */
export function NewFileForm({
  teamId,
  onCreated,
  onOpen,
  onCancel,
}: {
  teamId: string;
  onCreated: (done: ChangeDone) => void;
  /** Opens an existing file (the one a conflict found at the path). */
  onOpen: (path: string) => void;
  onCancel: () => void;
}) {
  const trpc = useTRPC();
  const [path, setPath] = useState("");
  const [text, setText] = useState("");
  const write = useMutation(trpc.workspace.write.mutationOptions({ onSuccess: (result) => onCreated({ kind: "created", result }) }));
  const create = (expectedVersion: number) => write.mutate({ teamId, path, content: text, expectedVersion });
  return (
    <>
      <form
        aria-label="New file"
        className="file-editor card"
        onSubmit={(e) => {
          e.preventDefault();
          if (path.trim()) create(0);
        }}
      >
        <h3>New file</h3>
        <Field label="Path (relative, like notes/plan.md)">
          <input value={path} onChange={(e) => setPath(e.target.value)} autoFocus spellCheck={false} />
        </Field>
        <Field label="Content">
          <textarea className="code-input" value={text} onChange={(e) => setText(e.target.value)} rows={10} spellCheck={false} />
        </Field>
        <div className="row-tight">
          <Button type="submit" disabled={!path.trim() || write.isPending}>
            Create file
          </Button>
          <Button variant="secondary" onClick={onCancel}>
            Cancel
          </Button>
        </div>
      </form>
      <WriteRefusal teamId={teamId} path={path} seen={0} mine={text} write={write} onReload={(at) => onOpen(at)} onRetry={create} />
    </>
  );
}

/**
 * Deleting the version shown, after a confirmation. The delete sends the version shown when the
 * person pressed Delete: a change since then makes a conflict. The file's history stays.
 */
export function DeleteFile({
  teamId,
  path,
  version,
  onDeleted,
  onReload,
}: {
  teamId: string;
  path: string;
  version: number;
  onDeleted: (done: ChangeDone) => void;
  onReload: () => void;
}) {
  const trpc = useTRPC();
  const [confirming, setConfirming] = useState<number | null>(null);
  const remove = useMutation(trpc.workspace.delete.mutationOptions({ onSuccess: (result) => onDeleted({ kind: "deleted", result }) }));
  const stale = staleOf(remove.error);
  const send = (expectedVersion: number) => remove.mutate({ teamId, path, expectedVersion });
  if (confirming === null) {
    return (
      <Button variant="danger" size="small" onClick={() => setConfirming(version)}>
        Delete
      </Button>
    );
  }
  return (
    <div className="delete-confirm" role="group" aria-label={`Delete ${path}`}>
      <span>
        Delete {path} (v{confirming})? Its history is kept.
        {version !== confirming && ` It is at v${version} now.`}
      </span>
      <Button variant="danger" size="small" disabled={remove.isPending} onClick={() => send(confirming)}>
        Delete file
      </Button>
      <Button
       
        variant="secondary" size="small"
        onClick={() => {
          setConfirming(null);
          remove.reset();
        }}
      >
        Cancel
      </Button>
      {stale ? (
        <ConflictPanel
          teamId={teamId}
          path={path}
          seen={confirming}
          current={stale.currentVersion}
          mine={null}
          onReload={() => {
            setConfirming(null);
            remove.reset();
            onReload();
          }}
          onRetry={send}
          retrying={remove.isPending}
        />
      ) : (
        remove.error && (
          <Alert>
            {fileErrorText(remove.error)}
          </Alert>
        )
      )}
    </div>
  );
}
