"use client";

import { useRefetchOn } from "../use-refetch-on";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import type { ApiError, InviteRole, TeamPerson, TeamRole } from "../api-types";
import { LIMITS } from "~/shared/limits";
import { appCodeOf } from "../app-error";
import { CopyButton } from "../copy-button";
import { ConfirmButton } from "../ui/confirm-button";
import { useTRPC } from "../trpc";
import { Button } from "../ui/button";
import { Alert, ErrorAlert } from "../ui/alert";
import { Field } from "../ui/field";

// The people of a team: everyone sees who is in it and may leave; owners invite by link,
// revoke open links, change roles and remove people. The list itself is live (team state).

const ROLES: readonly TeamRole[] = ["owner", "member", "viewer"];

/** A refusal as the person should read it; the last-owner rule in words that say what to do. */
function refusalText(error: ApiError, leaving: boolean): string {
  if (appCodeOf(error) === "LAST_OWNER") {
    return leaving
      ? "You are this team's last owner: make someone else owner before you leave."
      : "A team keeps at least one owner: make someone else owner first.";
  }
  return error.message;
}

export function PeoplePanel({
  teamId,
  people,
  myRole,
  meId,
  latestActionId,
}: {
  teamId: string;
  people: TeamPerson[];
  myRole: TeamRole;
  meId: string | null;
  /** Changes whenever someone acts (an invite accepted, one revoked): open invites are re-read. */
  latestActionId: string | null;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const owner = myRole === "owner";
  const setRole = useMutation(trpc.people.setRole.mutationOptions());
  const remove = useMutation(trpc.people.remove.mutationOptions());
  const leave = useMutation(trpc.people.leave.mutationOptions({ onSuccess: () => router.push("/") }));
  const failure = setRole.error ?? remove.error;

  return (
    <section aria-label="People" className="people">
      <h2>People</h2>
      <ul>
        {people.map((p) => (
          <li key={p.userId} className="person" aria-label={`${p.name}, ${p.role}`}>
            <span className="person-head">
              <strong>
                {p.name}
                {p.userId === meId ? " (you)" : ""}
              </strong>
              {!owner && <span className={`badge badge-role-${p.role}`}>{p.role}</span>}
            </span>
            {owner && (
              <div className="person-actions">
                <Field label={`Role of ${p.name}`} hideLabel>
                  <select
                    value={p.role}
                    disabled={setRole.isPending}
                    onChange={(e) => {
                      const role = ROLES.find((r) => r === e.target.value);
                      if (role) setRole.mutate({ teamId, userId: p.userId, role });
                    }}
                  >
                    {ROLES.map((r) => (
                      <option key={r} value={r}>
                        {r}
                      </option>
                    ))}
                  </select>
                </Field>
                {p.userId !== meId && (
                  <ConfirmButton
                    label={`Remove ${p.name}`}
                    title={`Remove ${p.name} from this team?`}
                    description={`${p.name} loses access at once: their open pages close and they can come back only with a new invite. What they did stays in the team's record.`}
                    confirm={`Remove ${p.name}`}
                    onConfirm={() => remove.mutate({ teamId, userId: p.userId })}
                  >
                    Remove
                  </ConfirmButton>
                )}
              </div>
            )}
          </li>
        ))}
      </ul>
      {failure && (
        <Alert>
          {refusalText(failure, false)}
        </Alert>
      )}
      {owner && <Invites teamId={teamId} latestActionId={latestActionId} />}
      <ConfirmButton
        className="secondary"
        title="Leave this team?"
        description="You lose access at once and can come back only with a new invite. Your prompts and changes stay in the team's record."
        confirm="Leave team"
        onConfirm={() => leave.mutate({ teamId })}
        disabled={leave.isPending}
      >
        Leave team
      </ConfirmButton>
      {leave.error && (
        <Alert>
          {refusalText(leave.error, true)}
        </Alert>
      )}
    </section>
  );
}

/** Owners: make an invite link (shown once), and see and revoke the open ones. */
function Invites({ teamId, latestActionId }: { teamId: string; latestActionId: string | null }) {
  const trpc = useTRPC();
  const invites = useQuery(trpc.people.invites.queryOptions({ teamId }));
  const { refetch } = invites;
  useRefetchOn(refetch, latestActionId);
  const [role, setRole] = useState<InviteRole>("member");
  const [maxUses, setMaxUses] = useState(1);
  const create = useMutation(trpc.people.invite.mutationOptions({ onSuccess: () => void refetch() }));
  const revoke = useMutation(trpc.people.revokeInvite.mutationOptions({ onSuccess: () => void refetch() }));
  const created = create.data;
  const link = created ? `${window.location.origin}/invite/${created.token}` : null;

  return (
    <div className="invites">
      <h3 className="label">Invite someone</h3>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate({ teamId, role, maxUses });
        }}
      >
        <Field label="Invite as" className="grow">
          <select value={role} onChange={(e) => setRole(e.target.value === "viewer" ? "viewer" : "member")}>
            <option value="member">member</option>
            <option value="viewer">viewer</option>
          </select>
        </Field>
        <Field label="People it lets in">
          <input
            type="number"
            min={1}
            max={LIMITS.inviteMaxUses}
            value={maxUses}
            onChange={(e) => setMaxUses(Math.min(LIMITS.inviteMaxUses, Math.max(1, Math.floor(Number(e.target.value) || 1))))}
          />
        </Field>
        <Button type="submit" disabled={create.isPending}>
          Create invite link
        </Button>
      </form>
      <p className="muted hint">{role === "member" ? "A member prompts agents, edits the board and adds teammates." : "A viewer watches live and acts on nothing."}</p>
      {created && link && (
        <div className="secret" role="group" aria-label={`New ${created.role} invite`}>
          <Field label={`Invite link for a ${created.role}`}>
            <input readOnly value={link} onFocus={(e) => e.target.select()} />
          </Field>
          <div className="row">
            <CopyButton text={link} label="Copy link" />
          </div>
          <p className="muted">
            Shown once: send it {created.maxUses === 1 ? "to the person. It lets one person in" : `to the people. It lets ${created.maxUses} people in`}, until{" "}
            {new Date(created.expiresAt).toLocaleString()}.
          </p>
        </div>
      )}
      <ErrorAlert error={create.error} />
      {invites.data && invites.data.length > 0 && (
        <>
          <h3 className="label">Open invites ({invites.data.length})</h3>
          <ul aria-label="Open invites">
            {invites.data.map((i) => (
              <li key={i.id} className="invite" aria-label={`${i.role} invite by ${i.createdByName}`}>
                <span className="grow">
                  {i.role} · by {i.createdByName} · {i.maxUses > 1 ? `${i.uses} of ${i.maxUses} used · ` : ""}expires {new Date(i.expiresAt).toLocaleString()}
                </span>
                <Button variant="danger" onClick={() => revoke.mutate({ teamId, inviteId: i.id })}>
                  Revoke
                </Button>
              </li>
            ))}
          </ul>
        </>
      )}
      <ErrorAlert error={revoke.error} />
    </div>
  );
}
