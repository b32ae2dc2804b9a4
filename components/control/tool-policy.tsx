"use client";

import { useRefetchOn } from "../use-refetch-on";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { LIMITS } from "~/shared/limits";
import { useTRPC } from "../trpc";
import { SettingCheckbox } from "../ui/setting-checkbox";
import { Button } from "../ui/button";
import { ErrorAlert } from "../ui/alert";
import { Field } from "../ui/field";

// The team's tool policy (SPEC.md §17): each tool of the agents' list is allowed, asks a person
// first, or is off (gone from every member's list). Owners change it; everyone sees it. Re-read
// when someone acts (a change, or "always allow" on an approval).

const MODES = [
  { value: "allow", label: "Allowed" },
  { value: "ask", label: "Ask first" },
  { value: "off", label: "Off" },
] as const;

type Mode = (typeof MODES)[number]["value"];

/** Each tool with its mode: a select where it may be changed, its name otherwise. */
function ToolModes({ tools, editable, pending, onChange }: { tools: { tool: string; mode: Mode }[]; editable: boolean; pending: boolean; onChange: (tool: string, mode: Mode) => void }) {
  return (
    <ul>
      {tools.map((p) => (
        <li key={p.tool} className="tool-mode">
          <code>{p.tool}</code>
          {editable ? (
            <Field label={`Mode of ${p.tool}`} hideLabel>
              <select
                value={p.mode}
                disabled={pending}
                onChange={(e) => {
                  const mode = MODES.find((m) => m.value === e.target.value)?.value;
                  if (mode) onChange(p.tool, mode);
                }}
              >
                {MODES.map((m) => (
                  <option key={m.value} value={m.value}>
                    {m.label}
                  </option>
                ))}
              </select>
            </Field>
          ) : (
            <span className="muted">{MODES.find((m) => m.value === p.mode)?.label}</span>
          )}
        </li>
      ))}
    </ul>
  );
}

/** The instance owner's tool policy for new teams (Account page). */
export function InstanceToolDefaults() {
  const trpc = useTRPC();
  const defaults = useQuery(trpc.account.toolDefaults.queryOptions());
  const { refetch } = defaults;
  const set = useMutation(trpc.account.setToolDefault.mutationOptions({ onSuccess: () => void refetch() }));
  return (
    <section aria-labelledby="tool-defaults-title" className="card tool-policy">
      <h2 id="tool-defaults-title">Tools in new teams</h2>
      <p className="muted hint">The tool policy every new team starts with; its owners can change it afterwards. Teams that exist keep theirs.</p>
      <ErrorAlert error={defaults.error} />
      <ToolModes tools={defaults.data ?? []} editable pending={set.isPending} onChange={(tool, mode) => set.mutate({ tool, mode })} />
      <ErrorAlert error={set.error} />
    </section>
  );
}

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
      <ErrorAlert error={policy.error} />
      <ToolModes tools={policy.data?.tools ?? []} editable={isOwner} pending={set.isPending} onChange={(tool, mode) => set.mutate({ teamId, tool, mode })} />
      <ErrorAlert error={set.error} />
      {policy.data && <PlanSetting teamId={teamId} on={policy.data.planApproval} isOwner={isOwner} onSaved={refetch} />}
      {policy.data && <Expiry key={policy.data.expiryMinutes ?? "never"} teamId={teamId} minutes={policy.data.expiryMinutes} isOwner={isOwner} onSaved={() => void refetch()} />}
    </section>
  );
}

/** Whether the tasks the Lead creates wait as a plan for a person's approval. */
function PlanSetting({ teamId, on, isOwner, onSaved }: { teamId: string; on: boolean; isOwner: boolean; onSaved: () => Promise<unknown> }) {
  const trpc = useTRPC();
  const save = useMutation(trpc.approvals.setPlanApproval.mutationOptions({ onSuccess: onSaved }));
  const said = on ? "The tasks the Lead creates wait as a plan until a member or owner approves it." : "The Lead's tasks may start as soon as they are created.";
  if (!isOwner) return <p className="muted hint">{said}</p>;
  return (
    <>
      <SettingCheckbox saved={on} pending={save.isPending} save={(value) => save.mutateAsync({ teamId, on: value })}>
        The Lead&apos;s plans wait for approval
      </SettingCheckbox>
      <p className="muted hint">{said}</p>
      <ErrorAlert error={save.error} />
    </>
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
      <Field label="Expire waiting requests after (minutes; empty: never)" className="grow">
        <input inputMode="numeric" value={text} onChange={(e) => setText(e.target.value)} placeholder="never" />
      </Field>
      <Button type="submit" variant="secondary" size="small" disabled={!valid || save.isPending}>
        Save
      </Button>
      {!valid && <span className="error">A whole number of minutes, 1 to {LIMITS.approvalExpiryMaxMinutes}</span>}
      {save.error && (
        <span role="alert" className="error">
          {save.error.message}
        </span>
      )}
    </form>
  );
}
