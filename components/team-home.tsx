"use client";

import { Skeleton } from "./ui/skeleton";
import { ErrorAlert, InlineError } from "./ui/alert";
import { useMutation, useQuery } from "@tanstack/react-query";
import { Link } from "./ui/link";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { ModelOptions } from "./model-options";
import { modelKey, spendText, useModels } from "./models";
import { agentStatus } from "./room/agent-status";
import { RelativeTime } from "./ui/relative-time";
import { StatusBadge } from "./status-badge";
import { useTRPC } from "./trpc";
import { LIMITS } from "~/shared/limits";
import { Button } from "./ui/button";
import { Field } from "./ui/field";

export function TeamHome() {
  const trpc = useTRPC();
  const router = useRouter();
  const teams = useQuery({ ...trpc.team.list.queryOptions(), refetchInterval: 3_000 });
  const { options, labelOf } = useModels();
  const [title, setTitle] = useState("");
  // null: the first model the server lists (its default). Until the list is there, a team is
  // created without a model and the server picks its default.
  const [model, setModel] = useState<string | null>(null);
  const selected = model ?? (options[0] ? modelKey(options[0]) : "");
  const create = useMutation(trpc.session.create.mutationOptions({ onSuccess: (s) => router.push(`/teams/${s.id}`) }));

  function submit(e: FormEvent) {
    e.preventDefault();
    const choice = options.find((m) => modelKey(m) === selected);
    create.mutate({
      title: title.trim() || "Untitled team",
      ...(choice ? { model: { provider: choice.provider, model: choice.model } } : {}),
    });
  }

  return (
    <main className="page">
      <section aria-labelledby="new-team">
        <h1 id="new-team">New team</h1>
        <p className="muted">A team starts with its Lead. Prompt the Lead and it creates teammates as it needs them.</p>
        <form className="row" onSubmit={submit}>
          <Field label="Title" className="grow">
            <input value={title} onChange={(e) => setTitle(e.target.value)} placeholder="What should the team work on?" maxLength={LIMITS.sessionTitleChars} />
          </Field>
          <Field label="Model" className="model-pick">
            <select value={selected} onChange={(e) => setModel(e.target.value)}>
              {options.length === 0 && <option value="">Default model</option>}
              <ModelOptions options={options} />
            </select>
          </Field>
          <Button type="submit" disabled={create.isPending}>
            Create team
          </Button>
        </form>
        <ErrorAlert error={create.error} />
      </section>

      <section aria-labelledby="teams">
        <h2 id="teams">Your teams</h2>
        {teams.isPending && <Skeleton label="Loading your teams…" />}
        {teams.error && !teams.data && <InlineError onRetry={() => void teams.refetch()}>Your teams could not be read: {teams.error.message}</InlineError>}
        {teams.data?.length === 0 && (
          <p className="muted">No teams yet. Create one above, then send its Lead a prompt, or open an invite link a team owner sent you.</p>
        )}
        <ul className="session-list" aria-label="Teams">
          {teams.data?.map((t) => (
            <li key={t.id}>
              <Link href={`/teams/${t.id}`}>{t.title}</Link>
              <StatusBadge status={agentStatus(t, t)} />
              <span className={`badge badge-role-${t.myRole}`} aria-label={`your role: ${t.myRole}`}>
                {t.myRole}
              </span>
              <span className="muted">
                {t.memberCount} member{t.memberCount === 1 ? "" : "s"} · {labelOf(t.model)} · last activity <RelativeTime at={t.lastActivityAt} />
              </span>
              <span className="muted team-spend">spent {spendText(t.spend)}</span>
            </li>
          ))}
        </ul>
      </section>
    </main>
  );
}
