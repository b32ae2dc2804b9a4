"use client";

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import type { WaitingRequest } from "../api-types";
import { summaryLine } from "../room/summary-line";
import { useTRPC } from "../trpc";
import { RelativeTime } from "../ui/relative-time";
import { Button } from "../ui/button";
import { ErrorAlert } from "../ui/alert";
import { Field } from "../ui/field";

// What waits for people (SPEC.md §17): each tool call to approve or deny (with a note; owners
// may also always allow the tool), each question to answer (a choice or words). Shown above the
// room's body while anything waits, to everyone: viewers see it, members and owners decide.
// The first decision wins; a late one reads who decided first.

export function WaitingRequests({ teamId, waiting, canAct, isOwner }: { teamId: string; waiting: WaitingRequest[]; canAct: boolean; isOwner: boolean }) {
  if (waiting.length === 0) return null;
  return (
    <section className="waiting" aria-labelledby="waiting-title">
      <h2 id="waiting-title">
        Waiting for people <span className="badge badge-waiting-for-approval">{waiting.length}</span>
      </h2>
      <ul>
        {waiting.map((w) => (
          <li key={w.id} className="waiting-item" aria-label={w.kind === "question" ? `Question from ${w.member}` : `${w.member} asks to run ${w.toolName}`}>
            <WaitingRequestItem teamId={teamId} request={w} canAct={canAct} isOwner={isOwner} />
          </li>
        ))}
      </ul>
    </section>
  );
}

/** One request: to decide (an approval) or to answer (a question), here or from a notification. */
export function WaitingRequestItem({ teamId, request, canAct, isOwner }: { teamId: string; request: WaitingRequest; canAct: boolean; isOwner: boolean }) {
  return request.kind === "question" ? (
    <Question teamId={teamId} request={request} canAct={canAct} />
  ) : (
    <Approval teamId={teamId} request={request} canAct={canAct} isOwner={isOwner} />
  );
}

function Asked({ request }: { request: WaitingRequest }) {
  return (
    <span className="muted waiting-meta">
      <RelativeTime at={request.createdAt} />
      {request.taskIds.length > 0 && ` · working on ${request.taskIds.join(", ")}`}
    </span>
  );
}

function Approval({ teamId, request, canAct, isOwner }: { teamId: string; request: WaitingRequest; canAct: boolean; isOwner: boolean }) {
  const trpc = useTRPC();
  const [note, setNote] = useState("");
  const decide = useMutation(trpc.approvals.decide.mutationOptions());
  const send = (approve: boolean, alwaysAllow = false) => decide.mutate({ teamId, approvalId: request.id, approve, note: note.trim() || undefined, alwaysAllow });
  return (
    <>
      <p className="waiting-what">
        <strong>{request.member}</strong> asks to run <code>{request.toolName}</code> <Asked request={request} />
      </p>
      <details className="waiting-args">
        <summary>
          Arguments<span className="summary-line"> · {summaryLine(request.arguments)}</span>
        </summary>
        <pre>{JSON.stringify(request.arguments, null, 2)}</pre>
      </details>
      {canAct && (
        <div className="row waiting-actions">
          <Field label={`Note to ${request.member} about ${request.toolName}`} hideLabel className="grow">
            <input value={note} onChange={(e) => setNote(e.target.value)} placeholder="Note (optional)" maxLength={2000} />
          </Field>
          <Button disabled={decide.isPending} onClick={() => send(true)}>
            Approve
          </Button>
          <Button variant="danger" disabled={decide.isPending} onClick={() => send(false)}>
            Deny
          </Button>
          {isOwner && (
            <Button variant="secondary" disabled={decide.isPending} onClick={() => send(true, true)}>
              Always allow {request.toolName}
            </Button>
          )}
        </div>
      )}
      <ErrorAlert error={decide.error} />
    </>
  );
}

function Question({ teamId, request, canAct }: { teamId: string; request: WaitingRequest; canAct: boolean }) {
  const trpc = useTRPC();
  const [text, setText] = useState("");
  const answer = useMutation(trpc.approvals.answer.mutationOptions());
  const args = (request.arguments ?? {}) as { question?: unknown; choices?: unknown };
  const question = typeof args.question === "string" ? args.question : "";
  const choices = Array.isArray(args.choices) ? args.choices.filter((c): c is string => typeof c === "string") : [];
  const send = (value: string) => answer.mutate({ teamId, approvalId: request.id, answer: value });
  return (
    <>
      <p className="waiting-what">
        <strong>{request.member}</strong> asks: <Asked request={request} />
      </p>
      <p className="waiting-question">{question}</p>
      {canAct && (
        <>
          {choices.length > 0 && (
            <div className="row waiting-actions" role="group" aria-label={`Answers offered by ${request.member}`}>
              {choices.map((c) => (
                <Button key={c} variant="secondary" disabled={answer.isPending} onClick={() => send(c)}>
                  {c}
                </Button>
              ))}
            </div>
          )}
          <form
            className="row waiting-actions"
            onSubmit={(e) => {
              e.preventDefault();
              if (text.trim()) send(text.trim());
            }}
          >
            <Field label={`Answer to ${request.member}`} hideLabel className="grow">
              <input value={text} onChange={(e) => setText(e.target.value)} placeholder={choices.length > 0 ? "Or answer in words" : "Your answer"} maxLength={4000} />
            </Field>
            <Button type="submit" disabled={answer.isPending || !text.trim()}>
              Answer
            </Button>
          </form>
        </>
      )}
      <ErrorAlert error={answer.error} />
    </>
  );
}
