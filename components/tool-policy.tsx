"use client";

import { useRefetchOn } from "./use-refetch-on";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { LIMITS } from "~/server/limits";
import { useTRPC } from "./trpc";

// The team's tool policy (SPEC.md §17): each tool of the agents' list is allowed, asks a person
// first, or is off (gone from every member's list). Owners change it; everyone sees it. Re-read
// when someone acts (a change, or "always allow" on an approval).

const MODES = [
  { value: "allow", label: "Allowed" },
  { value: "ask", label: "Ask first" },
  { value: "off", label: "Off" },
] as const;

export function ToolPolicy({ teamId, isOwner, latestActionId }: { teamId: string; isOwner: boolean; latestActionId: string | null }) {
  const trpc = useTRPC();
  const policy = useQuery(trpc.approvals.policy.queryOptions({ teamId }));
  const { refetch } = policy;
  useRefetchOn(refetch, latestActionId);
  const set = useMutation(trpc.approvals.setPolicy.mutationOptions({ onSuccess: () => void refetch() }));
  return (
    <section aria-labelledby="tool-policy-title" className="tool-policy">
      <h2 id="tool-policy-title">Tools</h2>
      <p className="muted hint">
        {isOwner ? "What the agents may do without asking. “Ask first” waits for a member or owner to approve each call." : "What the agents may do without asking; owners change it."}
      </p>
      {policy.error && (
        <p role="alert" className="error">
          {policy.error.message}
        </p>
      )}
      <ul>
        {policy.data?.tools.map((p) => (
          <li key={p.tool} className="tool-mode">
            <code>{p.tool}</code>
            {isOwner ? (
              <label>
                <span className="sr-only">Mode of {p.tool}</span>
                <select
                  value={p.mode}
                  disabled={set.isPending}
                  onChange={(e) => {
                    const mode = MODES.find((m) => m.value === e.target.value)?.value;
                    if (mode) set.mutate({ teamId, tool: p.tool, mode });
                  }}
                >
                  {MODES.map((m) => (
                    <option key={m.value} value={m.value}>
                      {m.label}
                    </option>
                  ))}
                </select>
              </label>
            ) : (
              <span className="muted">{MODES.find((m) => m.value === p.mode)?.label}</span>
            )}
          </li>
        ))}
      </ul>
      {set.error && (
        <p role="alert" className="error">
          {set.error.message}
        </p>
      )}
      {policy.data && <Expiry key={policy.data.expiryMinutes ?? "never"} teamId={teamId} minutes={policy.data.expiryMinutes} isOwner={isOwner} onSaved={() => void refetch()} />}
    </section>
  );
}

/** How long approvals and questions wait before they expire (a refusal the agent reads). */
function Expiry({ teamId, minutes, isOwner, onSaved }: { teamId: string; minutes: number | null; isOwner: boolean; onSaved: () => void }) {
  const trpc = useTRPC();
  const [text, setText] = useState(minutes === null ? "" : String(minutes));
  const save = useMutation(trpc.approvals.setExpiry.mutationOptions({ onSuccess: onSaved }));
  const said = minutes === null ? "Approvals and questions wait until someone decides." : `Approvals and questions expire after ${minutes} min without a decision.`;
  if (!isOwner) return <p className="muted hint">{said}</p>;
  const value = text.trim() === "" ? null : Number(text);
  const valid = value === null || (Number.isInteger(value) && value >= 1 && value <= LIMITS.approvalExpiryMaxMinutes);
  return (
    <form
      className="row expiry"
      onSubmit={(e) => {
        e.preventDefault();
        if (valid) save.mutate({ teamId, minutes: value });
      }}
    >
      <label className="grow">
        <span className="label">Expire waiting requests after (minutes; empty: never)</span>
        <input inputMode="numeric" value={text} onChange={(e) => setText(e.target.value)} placeholder="never" />
      </label>
      <button type="submit" className="secondary small" disabled={!valid || save.isPending}>
        Save
      </button>
      {!valid && <span className="error">A whole number of minutes, 1 to {LIMITS.approvalExpiryMaxMinutes}</span>}
      {save.error && (
        <span role="alert" className="error">
          {save.error.message}
        </span>
      )}
    </form>
  );
}
