"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { StatusBadge } from "./status-badge";
import { useTRPC } from "./trpc";

export function TeamHome() {
  const trpc = useTRPC();
  const router = useRouter();
  const teams = useQuery({ ...trpc.team.list.queryOptions(), refetchInterval: 3_000 });
  const models = useQuery(trpc.session.models.queryOptions());
  const [title, setTitle] = useState("");
  const [model, setModel] = useState("scripted:keyless");
  const create = useMutation(trpc.session.create.mutationOptions({ onSuccess: (s) => router.push(`/teams/${s.id}`) }));

  function submit(e: FormEvent) {
    e.preventDefault();
    const choice = models.data?.find((m) => `${m.provider}:${m.model}` === model);
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
          <label className="grow">
            <span className="label">Title</span>
            <input value={title} onChange={(e) => setTitle(e.target.value)} placeholder="What should the team work on?" maxLength={200} />
          </label>
          <label>
            <span className="label">Model</span>
            <select value={model} onChange={(e) => setModel(e.target.value)}>
              {(models.data ?? [{ provider: "scripted", model: "keyless", label: "Keyless scripted model (no API key)" }]).map((m) => (
                <option key={`${m.provider}:${m.model}`} value={`${m.provider}:${m.model}`}>
                  {m.label}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={create.isPending}>
            Create team
          </button>
        </form>
        {create.error && (
          <p role="alert" className="error">
            {create.error.message}
          </p>
        )}
      </section>

      <section aria-labelledby="teams">
        <h2 id="teams">Teams</h2>
        {teams.data?.length === 0 && <p className="muted">No teams yet. Create one above, then send its Lead a prompt.</p>}
        <ul className="session-list" aria-label="Teams">
          {teams.data?.map((t) => (
            <li key={t.id}>
              <Link href={`/teams/${t.id}`}>{t.title}</Link>
              <StatusBadge status={t.status} />
              <span className="muted">
                {t.memberCount} member{t.memberCount === 1 ? "" : "s"} · {t.model.provider}:{t.model.model} · last activity{" "}
                {new Date(t.lastActivityAt).toLocaleString()}
              </span>
            </li>
          ))}
        </ul>
      </section>
    </main>
  );
}
