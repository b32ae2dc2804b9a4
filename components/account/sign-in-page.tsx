"use client";

import { Link } from "../ui/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useEffect } from "react";
import { ssoErrorText } from "./auth-client";
import { SignInForm, SignUpForm, SsoButton } from "./auth-forms";
import { safeNext } from "./safe-next";
import { useAccountStatus, useRefreshAccount } from "./use-account";
import { Alert } from "../ui/alert";

/**
 * /sign-in: on a fresh instance (no owner yet) the first visitor creates the owner account;
 * afterwards people sign in, and may sign up when the owner opened sign-up. Afterwards the
 * person goes to `next` (a path on this site only).
 */
export function SignInPage() {
  const params = useSearchParams();
  const next = safeNext(params.get("next"));
  const status = useAccountStatus();
  const refresh = useRefreshAccount();
  const router = useRouter();
  const me = status.data?.me;
  const sso = status.data?.sso ?? null;
  // The provider's way back when it refused (Better Auth adds `error`).
  const ssoError = params.get("error");
  // Signed in (now, or already when the page opened): on to where the person was going.
  useEffect(() => {
    if (me) router.replace(next);
  }, [me, next, router]);

  if (status.error && !status.data) {
    return (
      <main className="page narrow">
        <Alert>
          The app is not answering: {status.error.message}
        </Alert>
      </main>
    );
  }
  if (!status.data) {
    return (
      <main className="page narrow">
        <p className="muted">Loading…</p>
      </main>
    );
  }
  if (me) {
    return (
      <main className="page narrow">
        <p className="muted">Signed in as {me.name}…</p>
      </main>
    );
  }
  if (!status.data.hasOwner) {
    return (
      <main className="page narrow">
        <section aria-labelledby="fresh">
          <h1 id="fresh">Create the owner account</h1>
          <p>This is a fresh instance: nobody has an account yet. Create the owner account to start.</p>
          <p className="muted">The owner runs this instance: they invite people, and can open sign-up to anyone.</p>
          <SignUpForm submitLabel="Create owner account" onSignedUp={refresh} />
          {sso && <SsoButton name={sso.name} next={next} label={`Create the owner account with ${sso.name}`} />}
        </section>
      </main>
    );
  }
  return (
    <main className="page narrow">
      <section aria-labelledby="sign-in">
        <h1 id="sign-in">Sign in</h1>
        {ssoError && (
          <Alert>
            {ssoErrorText(ssoError)}
          </Alert>
        )}
        {sso && <SsoButton name={sso.name} next={next} />}
        <SignInForm onSignedIn={refresh} />
        {status.data.openSignUp ? (
          <p>
            New here? <Link href={next === "/" ? "/sign-up" : `/sign-up?next=${encodeURIComponent(next)}`}>Create an account</Link>
          </p>
        ) : (
          <p className="muted">New here? Sign-up is by invitation: open the invite link a team owner sent you.</p>
        )}
      </section>
    </main>
  );
}
