"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import type { NotificationKind } from "../api-types";
import { CopyButton } from "../copy-button";
import { NOTIFICATION_KINDS } from "../account/notifications";
import { useTRPC } from "../trpc";
import { RelativeTime } from "../ui/relative-time";
import { ErrorAlert, InlineError } from "../ui/alert";
import { LIMITS } from "~/shared/limits";
import { Button } from "../ui/button";
import { Check, Field } from "../ui/field";
import { Table } from "../ui/table";

// A team's webhooks (SPEC.md §17), for its owners: add an endpoint for some of the team's events
// (its signing secret is shown once, to copy), see each delivery's status, remove it.

const KINDS = Object.keys(NOTIFICATION_KINDS) as NotificationKind[];

export function Webhooks({ teamId }: { teamId: string }) {
  const trpc = useTRPC();
  const hooks = useQuery({ ...trpc.webhooks.list.queryOptions({ teamId }), refetchInterval: 10_000 });
  const remove = useMutation(trpc.webhooks.remove.mutationOptions({ onSuccess: () => void hooks.refetch() }));
  return (
    <section aria-labelledby="webhooks-title" className="webhooks">
      <h2 id="webhooks-title">Webhooks</h2>
      <p className="muted hint">The team&apos;s events, posted to your endpoints and signed the Standard Webhooks way (webhook-id, webhook-timestamp, webhook-signature).</p>
      {hooks.error && <InlineError onRetry={() => void hooks.refetch()}>The webhooks could not be read: {hooks.error.message}</InlineError>}
      <ul className="webhook-list" aria-label="Webhooks">
        {hooks.data?.map((h) => (
          <li key={h.id} className="webhook" aria-label={`Webhook to ${h.url}`}>
            <p className="webhook-url">
              <code>{h.url}</code>
            </p>
            <p className="muted">
              {h.events.map((k) => NOTIFICATION_KINDS[k]).join(", ")} · added by {h.createdBy.name} <RelativeTime at={h.createdAt} />
            </p>
            {h.deliveries.length === 0 ? (
              <p className="muted">No deliveries yet.</p>
            ) : (
              <Table caption={`Newest deliveries to ${h.url}`} columns={["Event", "Status", "Attempts", "When"]}>
                {h.deliveries.map((d) => (
                  <tr key={d.id}>
                    <td>{d.kind}</td>
                    <td>
                      {d.status === "delivered" ? "Delivered" : d.status === "failed" ? "Failed" : "Retrying"}
                      {d.status !== "delivered" && d.lastError ? ` (${d.lastError})` : ""}
                    </td>
                    <td>{d.attempts}</td>
                    <td>
                      <RelativeTime at={d.createdAt} />
                    </td>
                  </tr>
                ))}
              </Table>
            )}
            <Button variant="danger" disabled={remove.isPending} onClick={() => remove.mutate({ teamId, webhookId: h.id })}>
              Remove webhook
            </Button>
          </li>
        ))}
      </ul>
      <AddWebhook teamId={teamId} onAdded={() => void hooks.refetch()} />
    </section>
  );
}

function AddWebhook({ teamId, onAdded }: { teamId: string; onAdded: () => void }) {
  const trpc = useTRPC();
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<Set<NotificationKind>>(new Set(["team.finished", "agent.failed"]));
  const add = useMutation(trpc.webhooks.add.mutationOptions({ onSuccess: onAdded }));
  return (
    <form
      className="add-webhook"
      aria-label="Add a webhook"
      onSubmit={(e) => {
        e.preventDefault();
        add.mutate({ teamId, url: url.trim(), events: [...events] });
      }}
    >
      <Field label="Endpoint URL">
        <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://example.com/hooks/agent-teams" maxLength={LIMITS.webhookUrlChars} required />
      </Field>
      <fieldset>
        <legend>Events</legend>
        {KINDS.map((k) => (
          <Check key={k} checked={events.has(k)} onChange={(e) => setEvents((s) => (e.target.checked ? new Set([...s, k]) : new Set([...s].filter((x) => x !== k))))}>
            {NOTIFICATION_KINDS[k]} <code>{k}</code>
          </Check>
        ))}
      </fieldset>
      <Button type="submit" disabled={add.isPending || url.trim() === "" || events.size === 0}>
        Add webhook
      </Button>
      <ErrorAlert error={add.error} />
      {add.data && (
        <div role="status" className="webhook-secret">
          <p>
            Added. Its signing secret, shown only now: <code>{add.data.secret}</code>
          </p>
          <CopyButton text={add.data.secret} label="Copy the signing secret" />
        </div>
      )}
    </form>
  );
}
