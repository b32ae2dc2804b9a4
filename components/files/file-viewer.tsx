"use client";

import { useState, type ReactNode } from "react";
import type { FileContent } from "../api-types";
import { Markdown } from "../markdown";
import { authorText, formatBytes, isMarkdown, linesOf } from "./tree-model";
import { Button } from "../ui/button";

// A file's content: Markdown rendered with the transcripts' safe renderer (or its source), any
// other file as code with line numbers. Content is only ever text nodes or the Markdown
// component's React elements, so nothing in a file can run script.

/** Code with line numbers; the numbers are CSS counters, so copying the code copies no numbers. */
export function CodeView({ content, label }: { content: string; label: string }) {
  return (
    <pre className="code-view" aria-label={label} tabIndex={0}>
      {linesOf(content).map((line, i) => (
        <span key={i} className="code-line">
          {line}
          {"\n"}
        </span>
      ))}
    </pre>
  );
}

export function FileBody({ path, content, version }: { path: string; content: string; version: number }) {
  const markdown = isMarkdown(path);
  const [source, setSource] = useState(false);
  const label = `Content of ${path} v${version}`;
  if (!markdown) return <CodeView content={content} label={label} />;
  return (
    <>
      <div className="row-tight" role="group" aria-label="Show as">
        <Button variant="secondary" size="small" aria-pressed={!source} onClick={() => setSource(false)}>
          Rendered
        </Button>
        <Button variant="secondary" size="small" aria-pressed={source} onClick={() => setSource(true)}>
          Source
        </Button>
      </div>
      {source ? (
        <CodeView content={content} label={label} />
      ) : (
        <div className="file-markdown" role="document" aria-label={label}>
          <Markdown text={content} />
        </div>
      )}
    </>
  );
}

/** The file's name, version, author, time and size, its actions, and its content. */
export function FileViewer({ file, notice, actions }: { file: FileContent; notice?: ReactNode; actions?: ReactNode }) {
  return (
    <section aria-label="File viewer" className="file-viewer">
      <div className="file-head">
        <h3>{file.path}</h3>
        <span className="muted file-meta">
          v{file.version} · {formatBytes(file.bytes)} · by {authorText(file.author)} ·{" "}
          <time dateTime={file.changedAt.toISOString()}>{file.changedAt.toLocaleString()}</time>
        </span>
        {actions && <span className="file-actions">{actions}</span>}
      </div>
      {notice}
      <FileBody path={file.path} content={file.content} version={file.version} />
    </section>
  );
}
