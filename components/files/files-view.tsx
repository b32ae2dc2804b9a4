"use client";

import { Skeleton } from "../ui/skeleton";
import { Alert, InlineError } from "../ui/alert";
import { useReportEditing } from "../people/use-presence";
import { Link } from "../ui/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useState } from "react";
import type { FileEntry, FileVersion, WorkspaceState } from "../api-types";
import { FileDiff } from "./file-diff";
import { ChangeNotice, DeleteFile, FileEditor, NewFileForm, type ChangeDone } from "./file-editor";
import { FileHistory } from "./file-history";
import { FileTree } from "./file-tree";
import { FileViewer } from "./file-viewer";
import { fileDownloadHref, filesHref, filesTarget, workspaceZipHref } from "./links";
import { authorText, formatBytes } from "./tree-model";
import { useFileContent, useFileHistory, useLiveFiles, useRefreshWorkspace } from "./use-workspace";
import { Button } from "../ui/button";

/**
 * The team workspace in the room (docs/SPEC.md §14): the tree, the open file (its latest
 * version, or the one the address names), its history and a diff of two versions, downloads,
 * and for members and owners new files, edits and deletes. Live: the listing follows the
 * workspace feed, and the open file is read again when its own head moves. The address carries what is
 * open (`?view=files&path=…&version=…`, see links.ts), so links from elsewhere open it.
 */
export function FilesView({ teamId, canAct, workspace }: { teamId: string; canAct: boolean; workspace: WorkspaceState }) {
  const router = useRouter();
  const { path, version } = filesTarget(useSearchParams());
  const list = useLiveFiles(teamId);
  const refresh = useRefreshWorkspace(teamId);
  const [creating, setCreating] = useState(false);
  const [done, setDone] = useState<ChangeDone | null>(null);
  const entries = list.files ?? [];
  const listed = list.files !== null;
  const entry = path === null ? undefined : entries.find((e) => e.path === path);

  /** After one's own change: show what it did, open its file at its latest version, read again now. */
  function changed(d: ChangeDone) {
    setDone(d);
    setCreating(false);
    router.push(filesHref(teamId, { path: d.result.path }));
    void refresh();
  }

  return (
    <section aria-label="Files" className="files-view">
      <div className="files-head">
        <h2>Files</h2>
        <span className="muted">
          {workspace.files} file{workspace.files === 1 ? "" : "s"} · {formatBytes(workspace.bytes)}
        </span>
        <span className="spacer" />
        <a href={workspaceZipHref(teamId)} download>
          Download all (zip)
        </a>
        {canAct && !creating && (
          <Button
           
            variant="secondary" size="small"
            onClick={() => {
              setCreating(true);
              setDone(null);
            }}
          >
            New file
          </Button>
        )}
      </div>
      {done && <ChangeNotice done={done} onDismiss={() => setDone(null)} />}
      {canAct && creating && (
        <NewFileForm
          teamId={teamId}
          onCreated={changed}
          onOpen={(p) => {
            setCreating(false);
            router.push(filesHref(teamId, { path: p }));
          }}
          onCancel={() => setCreating(false)}
        />
      )}
      {list.error && <InlineError onRetry={list.retry}>The files could not be read: {list.error}</InlineError>}
      <div className="files-body">
        {!listed ? <Skeleton label="Loading the files…" rows={4} /> : <FileTree teamId={teamId} entries={entries} selected={path} />}
        {path === null ? (
          listed && <p className="muted">{entries.length > 0 ? "Choose a file to see it, its history and its changes." : canAct ? "The workspace is empty. Agents' files appear here; you can add one with “New file”." : "The workspace is empty. Agents' files appear here."}</p>
        ) : (
          <FilePane
            // A new file starts a new pane: no picks, edits or confirmations carry over.
            key={path}
            teamId={teamId}
            path={path}
            version={version}
            entry={entry}
            listed={listed}
            canAct={canAct}
            onChanged={changed}
            onReload={() => {
              router.push(filesHref(teamId, { path }));
              void refresh();
            }}
          />
        )}
      </div>
    </section>
  );
}

/** Picking a version for the diff: at most two, the earliest pick gives way to a third. */
function pick(current: readonly number[], version: number, picked: boolean): number[] {
  if (!picked) return current.filter((v) => v !== version);
  return [...current.filter((v) => v !== version), version].slice(-2);
}

function FilePane({
  teamId,
  path,
  version,
  entry,
  listed,
  canAct,
  onChanged,
  onReload,
}: {
  teamId: string;
  path: string;
  /** The version the address names; null: the latest. */
  version: number | null;
  /** The file in the listing (its latest version); undefined when it is not a live file. */
  entry: FileEntry | undefined;
  /** The listing has loaded (so a missing entry means the file is not live). */
  listed: boolean;
  canAct: boolean;
  onChanged: (d: ChangeDone) => void;
  onReload: () => void;
}) {
  // Read again when this file's head moves, not at every change of the workspace.
  const live = entry?.version ?? 0;
  const file = useFileContent(teamId, path, version, live);
  const history = useFileHistory(teamId, path, live);
  const [compare, setCompare] = useState<number[]>([]);
  const [editing, setEditing] = useState<{ base: number; text: string } | null>(null);
  useReportEditing(editing ? { kind: "file", path } : null);
  const versions = history.data ?? [];
  const shown = file.data?.version ?? version;
  const latest = listed ? (entry?.version ?? null) : (file.data?.version ?? null);
  // Editing and deleting start from the latest version only.
  const atLatest = file.data !== undefined && !file.error && (version === null || version === entry?.version);
  const [older, newer] = [...compare].sort((a, b) => a - b).map((v) => versions.find((h) => h.version === v));

  return (
    <div className="file-pane">
      {/* An error first: a refetch that failed (the file was deleted) keeps the content it had. */}
      {file.data && !file.error ? (
        <FileViewer
          file={file.data}
          notice={<OlderNotice teamId={teamId} path={path} shown={file.data.version} latest={latest} listed={listed} versions={versions} />}
          actions={
            <>
              <a href={fileDownloadHref(teamId, path, file.data.version)} download>
                Download v{file.data.version}
              </a>
              {canAct && atLatest && !editing && (
                <Button variant="secondary" size="small" onClick={() => setEditing({ base: file.data.version, text: file.data.content })}>
                  Edit
                </Button>
              )}
              {canAct && atLatest && !editing && (
                <DeleteFile teamId={teamId} path={path} version={file.data.version} onDeleted={onChanged} onReload={onReload} />
              )}
            </>
          }
        />
      ) : (
        <section aria-label="File viewer" className="file-viewer">
          <div className="file-head">
            <h3>{path}</h3>
          </div>
          {file.error ? <Missing versions={versions} version={version} fallback={file.error.message} /> : <Skeleton label={`Loading ${path}…`} rows={3} tall />}
        </section>
      )}
      {editing && (
        <FileEditor
          teamId={teamId}
          path={path}
          base={editing.base}
          initial={editing.text}
          latest={latest}
          onSaved={(d) => {
            setEditing(null);
            onChanged(d);
          }}
          onReload={() => {
            setEditing(null);
            onReload();
          }}
          onCancel={() => setEditing(null)}
        />
      )}
      {history.error && !file.error && (
        <Alert>
          {history.error.message}
        </Alert>
      )}
      {versions.length > 0 && (
        <FileHistory teamId={teamId} versions={versions} shown={shown} compare={compare} onCompare={(v, on) => setCompare(pick(compare, v, on))} />
      )}
      {older && newer && <FileDiff teamId={teamId} path={path} from={older} to={newer} />}
    </div>
  );
}

/** Says when the version shown is not the latest (or the file is gone since). */
function OlderNotice({
  teamId,
  path,
  shown,
  latest,
  listed,
  versions,
}: {
  teamId: string;
  path: string;
  shown: number;
  latest: number | null;
  listed: boolean;
  versions: readonly FileVersion[];
}) {
  if (!listed || latest === shown) return null;
  if (latest === null) {
    const tomb = versions.find((v) => v.deleted && v.version > shown);
    return (
      <p className="notice-line" role="note">
        An older version: {path} was deleted{tomb ? ` in v${tomb.version} by ${authorText(tomb.author)}` : ""}.
      </p>
    );
  }
  return (
    <p className="notice-line" role="note">
      An older version: the latest is v{latest}. <Link href={filesHref(teamId, { path })}>Show the latest</Link>
    </p>
  );
}

/** No content to show: the version (or the file's latest) is a deletion, or there is no such file. */
function Missing({ versions, version, fallback }: { versions: readonly FileVersion[]; version: number | null; fallback: string }) {
  const v = version === null ? versions[0] : versions.find((h) => h.version === version);
  if (v?.deleted) {
    return (
      <p className="notice-line" role="note">
        Deleted: v{v.version} by {authorText(v.author)} at {v.createdAt.toLocaleString()} deleted this file. Its history is below.
      </p>
    );
  }
  return (
    <Alert>
      {fallback}
    </Alert>
  );
}
