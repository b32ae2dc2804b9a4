"use client";

import { Link } from "../ui/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useEffect } from "react";
import { SignUpForm } from "./auth-forms";
import { InvitePage } from "../people/invite-page";
import { safeNext } from "./safe-next";
import { useAccountStatus, useRefreshAccount } from "./use-account";

/**
 * /sign-up: with `?invite=<token>` the invite's page; otherwise an account for anyone when the
 * owner opened sign-up. A fresh instance's first account is made on /sign-in.
 */
export function SignUpPage() {
  const params = useSearchParams();
  const invite = params.get("invite");
  if (invite) return <InvitePage token={invite} />;
  return <OpenSignUp next={safeNext(params.get("next"))} />;
}

function OpenSignUp({ next }: { next: string }) {
  const status = useAccountStatus();
  const refresh = useRefreshAccount();
  const router = useRouter();
  const me = status.data?.me;
  const fresh = status.data?.hasOwner === false;
  useEffect(() => {
    if (me) router.replace(next);
    else if (fresh) router.replace(next === "/" ? "/sign-in" : `/sign-in?next=${encodeURIComponent(next)}`);
  }, [me, fresh, next, router]);

  if (!status.data || me || fresh) {
    return (
      <main className="page narrow">
        <p className="muted">Loading…</p>
      </main>
    );
  }
  return (
    <main className="page narrow">
      <section aria-labelledby="sign-up">
        <h1 id="sign-up">Create an account</h1>
        {status.data.openSignUp ? (
          <SignUpForm submitLabel="Create account" onSignedUp={refresh} />
        ) : (
          <p role="alert">Sign-up is by invitation: open the invite link a team owner sent you.</p>
        )}
        <p className="muted">
          Already have an account? <Link href={next === "/" ? "/sign-in" : `/sign-in?next=${encodeURIComponent(next)}`}>Sign in</Link>
        </p>
      </section>
    </main>
  );
}
