"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc";
import { InlineError } from "../ui/alert";
import type { AuditEntry } from "../api-types";
import { AUDIT_KINDS, type AuditKind } from "~/shared/audit-kinds";
import { Button } from "../ui/button";
import { Field } from "../ui/field";
import { Table } from "../ui/table";

// The audit log (SPEC.md §19) for the instance owner (everything) and team owners (their
// teams): filter by kind, person, team and time, page back, export what the filter shows as CSV.

type Filter = { kind?: AuditKind; actor?: string; teamId?: string; from?: Date; to?: Date };

function label(kind: string): string {
  return kind.replace(/_/g, " ");
}

export function AuditPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState({ kind: "", actor: "", teamId: "", from: "", to: "" });
  const [filter, setFilter] = useState<Filter>({});
  const [exporting, setExporting] = useState<string | null>(null);
  const teams = useQuery(trpc.team.list.queryOptions());
  const owned = (teams.data ?? []).filter((t) => t.myRole === "owner");
  const entries = useQuery(trpc.audit.list.queryOptions(filter));
  // Pages before the first, read on request (and forgotten when the filter changes).
  const [older, setOlder] = useState<{ for: Filter; rows: AuditEntry[]; next: string | null; loading: boolean }>({ for: filter, rows: [], next: null, loading: false });
  const more = older.for === filter ? older : { for: filter, rows: [], next: null, loading: false };
  const rows = [...(entries.data?.entries ?? []), ...more.rows];
  const nextBefore = more.rows.length > 0 ? more.next : (entries.data?.nextBefore ?? null);
  const showOlder = async () => {
    if (!nextBefore) return;
    setOlder({ ...more, loading: true });
    const page = await queryClient.fetchQuery(trpc.audit.list.queryOptions({ ...filter, before: nextBefore })).catch(() => null);
    setOlder({ for: filter, rows: [...more.rows, ...(page?.entries ?? [])], next: page?.nextBefore ?? null, loading: false });
  };

  const exportCsv = async () => {
    setExporting("Preparing the CSV…");
    try {
      const out = await queryClient.fetchQuery(trpc.audit.exportCsv.queryOptions(filter));
      const url = URL.createObjectURL(new Blob([out.csv], { type: "text/csv" }));
      const a = document.createElement("a");
      a.href = url;
      a.download = `audit-log-${new Date().toISOString().slice(0, 10)}.csv`;
      a.click();
      URL.revokeObjectURL(url);
      setExporting(out.truncated ? `Exported the newest ${out.rows} entries; narrow the filter for older ones.` : `Exported ${out.rows} ${out.rows === 1 ? "entry" : "entries"}.`);
    } catch (e) {
      setExporting(`The export failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  };

  return (
    <main className="page">
      <h1>Audit log</h1>
      <p className="muted">Sign-ins, API tokens, roles, invitations, tool policy, MCP servers, webhooks, budgets and decisions. Entries are never changed or removed.</p>
      <form
        className="audit-filter row"
        aria-label="Filter the audit log"
        onSubmit={(e) => {
          e.preventDefault();
          setFilter({
            ...(draft.kind ? { kind: draft.kind as AuditKind } : {}),
            ...(draft.actor.trim() ? { actor: draft.actor.trim() } : {}),
            ...(draft.teamId ? { teamId: draft.teamId } : {}),
            ...(draft.from ? { from: new Date(`${draft.from}T00:00:00`) } : {}),
            ...(draft.to ? { to: new Date(`${draft.to}T23:59:59.999`) } : {}),
          });
        }}
      >
        <Field label="Kind">
          <select value={draft.kind} onChange={(e) => setDraft({ ...draft, kind: e.target.value })}>
            <option value="">Any</option>
            {AUDIT_KINDS.map((k) => (
              <option key={k} value={k}>
                {label(k)}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Person">
          <input value={draft.actor} onChange={(e) => setDraft({ ...draft, actor: e.target.value })} placeholder="Name or email" maxLength={254} />
        </Field>
        <Field label="Team">
          <select value={draft.teamId} onChange={(e) => setDraft({ ...draft, teamId: e.target.value })}>
            <option value="">Any</option>
            {owned.map((t) => (
              <option key={t.id} value={t.id}>
                {t.title}
              </option>
            ))}
          </select>
        </Field>
        <Field label="From">
          <input type="date" value={draft.from} onChange={(e) => setDraft({ ...draft, from: e.target.value })} />
        </Field>
        <Field label="To">
          <input type="date" value={draft.to} onChange={(e) => setDraft({ ...draft, to: e.target.value })} />
        </Field>
        <Button type="submit">Apply</Button>
        <Button variant="secondary" onClick={() => void exportCsv()}>
          Export CSV
        </Button>
      </form>
      {exporting && (
        <p role="status" className="muted">
          {exporting}
        </p>
      )}
      {entries.error && <InlineError onRetry={() => void entries.refetch()}>{entries.error.message}</InlineError>}
      {entries.data && rows.length === 0 && <p className="muted">No entries match.</p>}
      {rows.length > 0 && (
        <Table caption="Audit entries, newest first" columns={["Time", "Kind", "Person", "Team", "Details"]}>
          {rows.map((r) => (
            <tr key={r.id}>
              <td>
                <time dateTime={r.at.toISOString()}>{r.at.toLocaleString()}</time>
              </td>
              <td>{label(r.kind)}</td>
              <td>
                {r.actorName}
                {r.ip && <span className="muted"> · {r.ip}</span>}
              </td>
              <td>{r.teamTitle ?? "—"}</td>
              <td>
                <code>{Object.keys(r.detail).length > 0 ? JSON.stringify(r.detail) : ""}</code>
              </td>
            </tr>
          ))}
        </Table>
      )}
      {nextBefore && (
        <Button variant="secondary" disabled={more.loading} onClick={() => void showOlder()}>
          Older entries
        </Button>
      )}
    </main>
  );
}
