"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useTRPC } from "../trpc";
import { RelativeTime } from "../ui/relative-time";
import { Alert, ErrorAlert, InlineError } from "../ui/alert";
import { useRefetchOn } from "../use-refetch-on";
import { LIMITS } from "~/shared/limits";
import { Button } from "../ui/button";
import { Field } from "../ui/field";

// A team's MCP servers (SPEC.md §18): each with its health (connected and its tools, or failing
// with the error and when it was tried), for everyone; owners add one (name, URL, token),
// test its connection and remove it. A token goes in once and never comes back.

export function McpServers({ teamId, isOwner, latestActionId }: { teamId: string; isOwner: boolean; latestActionId: string | null }) {
  const trpc = useTRPC();
  const servers = useQuery(trpc.mcpServers.list.queryOptions({ teamId }));
  const { refetch } = servers;
  useRefetchOn(refetch, latestActionId);
  const test = useMutation(trpc.mcpServers.test.mutationOptions({ onSettled: () => void refetch() }));
  // The servers' tools are part of the team's tool policy: a change here is one there.
  const queryClient = useQueryClient();
  const toolsSeen = servers.data?.map((s) => `${s.name}:${s.tools.map((t) => t.name).join(",")}`).join(";");
  useEffect(() => {
    if (toolsSeen !== undefined) void queryClient.invalidateQueries({ queryKey: trpc.approvals.policy.queryKey({ teamId }) });
  }, [toolsSeen, queryClient, trpc, teamId]);
  const remove = useMutation(trpc.mcpServers.remove.mutationOptions({ onSuccess: () => void refetch() }));
  return (
    <section aria-labelledby="mcp-title" className="webhooks">
      <h2 id="mcp-title">MCP servers</h2>
      <p className="muted hint">
        Tools from outside: each server&apos;s tools, as its last connection found them. Agents see them as <code>mcp__server__tool</code>; read-only
        tools are allowed and the others ask a person first, unless the tool policy below says otherwise.
      </p>
      {servers.error && <InlineError onRetry={() => void refetch()}>The MCP servers could not be read: {servers.error.message}</InlineError>}
      {servers.data?.length === 0 && <p className="muted">No MCP servers yet.</p>}
      <ul className="webhook-list" aria-label="MCP servers">
        {servers.data?.map((s) => (
          <li key={s.id} className="webhook" aria-label={`MCP server ${s.name}`}>
            <p>
              <strong>{s.name}</strong> {s.url && <code>{s.url}</code>}{" "}
              {s.configured && <span className="badge">Configured on the server</span>}{" "}
              <span className={s.status === "connected" ? "badge badge-working" : s.status === "failing" ? "badge badge-failed" : "badge"}>
                {s.status === "connected" ? `Connected · ${s.tools.length} tools` : s.status === "failing" ? "Failing" : "Not tested yet"}
              </span>
            </p>
            {s.lastError && (
              <p className="error">
                {s.lastError} {s.checkedAt && <RelativeTime at={s.checkedAt} />}
              </p>
            )}
            {s.tools.length > 0 && (
              <details>
                <summary>Tools</summary>
                <ul>
                  {s.tools.map((t) => (
                    <li key={t.name}>
                      <code>{t.name}</code> {t.description && <span className="muted">{t.description}</span>}
                    </li>
                  ))}
                </ul>
              </details>
            )}
            {isOwner && !s.configured && (
              <div className="row">
                <Button variant="secondary" disabled={test.isPending} onClick={() => test.mutate({ teamId, serverId: s.id })}>
                  Test connection
                </Button>
                <Button variant="danger" disabled={remove.isPending} onClick={() => remove.mutate({ teamId, serverId: s.id })}>
                  Remove
                </Button>
              </div>
            )}
          </li>
        ))}
      </ul>
      {(test.error ?? remove.error) && (
        <Alert>
          {(test.error ?? remove.error)!.message}
        </Alert>
      )}
      {isOwner && <AddMcpServer teamId={teamId} onAdded={() => void refetch()} />}
    </section>
  );
}

function AddMcpServer({ teamId, onAdded }: { teamId: string; onAdded: () => void }) {
  const trpc = useTRPC();
  const [name, setName] = useState("");
  const [url, setUrl] = useState("");
  const [token, setToken] = useState("");
  const add = useMutation(
    trpc.mcpServers.add.mutationOptions({
      onSuccess: () => {
        setName("");
        setUrl("");
        setToken("");
        onAdded();
      },
    }),
  );
  return (
    <form
      className="add-webhook"
      aria-label="Add an MCP server"
      onSubmit={(e) => {
        e.preventDefault();
        add.mutate({ teamId, name: name.trim(), url: url.trim(), ...(token ? { bearerToken: token } : {}) });
      }}
    >
      <Field label="Name (its tools are named mcp__name__tool)">
        <input value={name} onChange={(e) => setName(e.target.value)} placeholder="tracker" maxLength={32} required />
      </Field>
      <Field label="Streamable HTTP URL">
        <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://example.com/mcp" maxLength={LIMITS.webhookUrlChars} required />
      </Field>
      <Field label="Bearer token (optional; stored encrypted, never shown again)">
        <input type="password" value={token} onChange={(e) => setToken(e.target.value)} autoComplete="off" />
      </Field>
      <Button type="submit" disabled={add.isPending || !name.trim() || !url.trim()}>
        Add MCP server
      </Button>
      <ErrorAlert error={add.error} />
    </form>
  );
}
