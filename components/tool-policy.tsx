"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
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
  useEffect(() => {
    void refetch();
  }, [latestActionId, refetch]);
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
        {policy.data?.map((p) => (
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
    </section>
  );
}
