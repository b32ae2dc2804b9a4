"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { Link } from "../ui/link";
import { useRouter } from "next/navigation";
import { useEffect, useState, type ReactNode } from "react";
import type { InviteInfo } from "../api-types";
import { appCodeOf } from "../app-error";
import { SignUpForm, SsoButton } from "../account/auth-forms";
import { useTRPC } from "../trpc";
import { useAccountStatus, useRefreshAccount } from "../account/use-account";
import { Button } from "../ui/button";
import { Alert } from "../ui/alert";

// An invite link (/invite/<token>, or /sign-up?invite=<token>): what it offers, and either
// an account made with it (signed out) or a Join button (signed in). The token is a secret:
// it goes only to this app's own API.

const STATUS_TEXT: Record<Exclude<InviteInfo["status"], "valid">, string> = {
  expired: "This invite link has expired. Ask the team's owner for a new one.",
  revoked: "This invite link was revoked. Ask the team's owner for a new one.",
  used: "This invite link has let in as many people as it allows. Ask the team's owner for a new one.",
};

function useInviteInfo(token: string) {
  const trpc = useTRPC();
  return useQuery({ ...trpc.people.inviteInfo.queryOptions({ token }), retry: false });
}

/** The invite as the person sees it before accepting. */
function InviteSummary({ info }: { info: InviteInfo }) {
  return (
    <div className="invite-summary" aria-label="Invitation">
      <p>
        <strong>{info.invitedBy}</strong> invited you to join <strong>{info.teamTitle}</strong> as a <strong>{info.role}</strong>.
      </p>
      <p className="muted">
        {info.role === "viewer" ? "A viewer watches the team live and acts on nothing." : "A member prompts agents, edits the board and adds teammates."}
        {info.status === "valid" &&
          ` The link lets in ${info.usesLeft === 1 ? "one more person" : `${info.usesLeft} more people`}, until ${new Date(info.expiresAt).toLocaleString()}.`}
      </p>
    </div>
  );
}

/** Loading, an unknown link, or a link that can no longer be used; null when it is usable. */
function inviteProblem(info: ReturnType<typeof useInviteInfo>): ReactNode {
  if (info.error) {
    return (
      <Alert>
        {appCodeOf(info.error) === "INVITE_NOT_FOUND" ? "This invite link is not valid: check that you copied all of it." : info.error.message}
      </Alert>
    );
  }
  if (!info.data) return <p className="muted">Reading the invite…</p>;
  if (info.data.status !== "valid") {
    return (
      <>
        <InviteSummary info={info.data} />
        <Alert>
          {STATUS_TEXT[info.data.status]}
        </Alert>
      </>
    );
  }
  return null;
}

/** Signed out: make an account with the invite, join, and open the team. */
export function InviteSignUp({ token, onJoining }: { token: string; onJoining?: () => void }) {
  const trpc = useTRPC();
  const router = useRouter();
  const refresh = useRefreshAccount();
  const info = useInviteInfo(token);
  const sso = useAccountStatus().data?.sso ?? null;
  const accept = useMutation(trpc.people.accept.mutationOptions());
  // After the account exists: joining (then the page shows nothing of the used link), or a failed join to retry.
  const [phase, setPhase] = useState<"form" | "joining" | "failed">("form");

  async function join() {
    setPhase("joining");
    onJoining?.();
    try {
      const { teamId } = await accept.mutateAsync({ token });
      await refresh();
      router.push(`/teams/${teamId}`);
    } catch {
      setPhase("failed");
    }
  }

  if (phase === "joining") {
    return (
      <main className="page narrow">
        <p className="muted" role="status">
          Account made. Opening the team…
        </p>
      </main>
    );
  }
  const problem = inviteProblem(info);
  return (
    <main className="page narrow">
      <section aria-labelledby="invite">
        <h1 id="invite">{info.data && info.data.status === "valid" ? `Join ${info.data.teamTitle}` : "Invitation"}</h1>
        {problem ??
          (info.data && (
            <>
              <InviteSummary info={info.data} />
              {phase === "form" ? (
                <>
                  <h2>Create your account</h2>
                  {sso && <SsoButton name={sso.name} next={`/invite/${token}`} inviteToken={token} label={`Join with ${sso.name}`} />}
                  <SignUpForm submitLabel="Create account and join" inviteToken={token} onSignedUp={join} />
                </>
              ) : (
                <>
                  <Alert>
                    Your account was made, but joining failed: {accept.error?.message ?? "no answer"}
                  </Alert>
                  <Button onClick={() => void join()}>
                    Join {info.data.teamTitle} as {info.data.role}
                  </Button>
                </>
              )}
            </>
          ))}
        {phase === "form" && (
          <p className="muted">
            Already have an account? <Link href={`/sign-in?next=${encodeURIComponent(`/invite/${token}`)}`}>Sign in</Link> and open the link again.
          </p>
        )}
      </section>
    </main>
  );
}

/** Signed in: one button joins the team with the invite's role. */
export function JoinTeam({ token }: { token: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const info = useInviteInfo(token);
  const accept = useMutation(trpc.people.accept.mutationOptions({ onSuccess: ({ teamId }) => router.push(`/teams/${teamId}`) }));
  // Already in (an account just made through the link, by single sign-on): on to the team.
  const joined = info.data?.joinedTeamId;
  useEffect(() => {
    if (joined) router.replace(`/teams/${joined}`);
  }, [joined, router]);
  const problem = inviteProblem(info);
  return (
    <main className="page narrow">
      <section aria-labelledby="invite">
        <h1 id="invite">Invitation</h1>
        {problem ??
          (info.data && (
            <>
              <InviteSummary info={info.data} />
              <Button onClick={() => accept.mutate({ token })} disabled={accept.isPending || accept.isSuccess}>
                Join {info.data.teamTitle} as {info.data.role}
              </Button>
              {accept.error && (
                <Alert>
                  {appCodeOf(accept.error) === "INVITE_NOT_FOUND" ? `Not joined: ${accept.error.message}` : accept.error.message}
                </Alert>
              )}
            </>
          ))}
      </section>
    </main>
  );
}
