"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { StatusBadge } from "./status-badge";
import { useTRPC } from "./trpc";

export function SessionHome() {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const sessions = useQuery({ ...trpc.session.list.queryOptions(), refetchInterval: 3_000 });
  const models = useQuery(trpc.session.models.queryOptions());
  const [title, setTitle] = useState("");
  const [model, setModel] = useState("scripted:keyless");
  const create = useMutation(
    trpc.session.create.mutationOptions({
      onSuccess: async (s) => {
        await queryClient.invalidateQueries({ queryKey: trpc.session.list.queryKey() });
        router.push(`/sessions/${s.id}`);
      },
    }),
  );

  function submit(e: FormEvent) {
    e.preventDefault();
    const choice = models.data?.find((m) => `${m.provider}:${m.model}` === model);
    create.mutate({ title: title.trim() || "Untitled session", ...(choice ? { model: { provider: choice.provider, model: choice.model } } : {}) });
  }

  return (
    <main className="page">
      <section aria-labelledby="new-session">
        <h1 id="new-session">New session</h1>
        <form className="row" onSubmit={submit}>
          <label className="grow">
            <span className="label">Title</span>
            <input value={title} onChange={(e) => setTitle(e.target.value)} placeholder="What is this session about?" maxLength={200} />
          </label>
          <label>
            <span className="label">Model</span>
            <select value={model} onChange={(e) => setModel(e.target.value)}>
              {(models.data ?? [{ provider: "scripted", model: "keyless", label: "Keyless scripted model" }]).map((m) => (
                <option key={`${m.provider}:${m.model}`} value={`${m.provider}:${m.model}`}>
                  {m.label}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={create.isPending}>
            Create session
          </button>
        </form>
        {create.error && <p role="alert" className="error">{create.error.message}</p>}
      </section>

      <section aria-labelledby="sessions">
        <h2 id="sessions">Sessions</h2>
        {sessions.data?.length === 0 && <p className="muted">No sessions yet. Create one above, then send it a prompt.</p>}
        <ul className="session-list">
          {sessions.data?.map((s) => (
            <li key={s.id}>
              <a href={`/sessions/${s.id}`}>{s.title}</a>
              <StatusBadge status={s.status} />
              <span className="muted">
                {s.model.provider}:{s.model.model} · {s.lastSeq} events · {new Date(s.updatedAt).toLocaleString()}
              </span>
            </li>
          ))}
        </ul>
      </section>
    </main>
  );
}
