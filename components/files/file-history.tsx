"use client";

import { Link } from "../ui/link";
import type { FileVersion } from "../api-types";
import { filesHref } from "./links";
import { authorText, formatBytes } from "./tree-model";
import { Check } from "../ui/field";

// A file's versions, newest first: who wrote each (an agent or a person), the tasks the agent
// had in progress, when, and the write-scope warnings the change raised (how people see scope
// conflicts). Deletions are versions too. Two versions picked for comparison show their diff.

export function FileHistory({
  teamId,
  versions,
  shown,
  compare,
  onCompare,
}: {
  teamId: string;
  versions: readonly FileVersion[];
  /** The version the viewer shows. */
  shown: number | null;
  /** The versions picked for a diff (at most two). */
  compare: readonly number[];
  onCompare: (version: number, picked: boolean) => void;
}) {
  return (
    <section aria-label="History" className="file-history">
      <h3 className="label">
        History ({versions.length} version{versions.length === 1 ? "" : "s"}) · pick two to compare
      </h3>
      <ol>
        {versions.map((v) => (
          <li key={v.version} aria-label={`v${v.version}`} aria-current={v.version === shown ? "true" : undefined} className={v.version === shown ? "shown" : undefined}>
            <div className="version-head">
              <Check checked={compare.includes(v.version)} onChange={(e) => onCompare(v.version, e.target.checked)}>
                <span className="sr-only">Compare v{v.version}</span>
              </Check>
              <strong>v{v.version}</strong>
              {v.deleted ? (
                <span className="tag">deleted</span>
              ) : v.version === shown ? (
                <span className="muted">shown</span>
              ) : (
                <Link href={filesHref(teamId, { path: v.path, version: v.version })} aria-label={`View v${v.version}`}>
                  View
                </Link>
              )}
              <span className="muted version-meta">
                by {authorText(v.author)}
                {v.taskIds.length > 0 && ` · working on ${v.taskIds.join(", ")}`}
                {!v.deleted && ` · ${formatBytes(v.bytes)}`} · <time dateTime={v.createdAt.toISOString()}>{v.createdAt.toLocaleString()}</time>
              </span>
            </div>
            {v.warnings.map((w) => (
              <p key={w} className="warning" role="note">
                <span aria-hidden="true">⚠ </span>Write-scope warning: {w}
              </p>
            ))}
          </li>
        ))}
      </ol>
    </section>
  );
}
