"use client";

import { useState, type FormEvent, type ReactNode } from "react";
import { LIMITS } from "~/shared/limits";
import { SSO_PROVIDER_ID } from "~/shared/sso";
import { authClient, authErrorText, type AuthFailure } from "./auth-client";
import { EmailField, PasswordField } from "../form-fields";
import { Button } from "../ui/button";
import { Alert } from "../ui/alert";
import { Field } from "../ui/field";

// The account forms of the sign-in, sign-up and invite pages. Each calls Better Auth (which
// sets the session cookie) and hands over to the page on success.

/** A form's submit through Better Auth: busy while it runs, its refusal as readable text, then `onDone`. */
function useAuthSubmit(call: () => Promise<{ error: AuthFailure | null }>, onDone: () => Promise<void>) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const { error: failed } = await call();
      if (failed) setError(authErrorText(failed));
      else await onDone();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }
  return { busy, error, submit };
}

/** Create an account: the instance's owner on a fresh instance, or a person with an invite or open sign-up. */
export function SignUpForm({
  submitLabel,
  inviteToken,
  onSignedUp,
}: {
  submitLabel: string;
  inviteToken?: string;
  onSignedUp: () => Promise<void>;
}) {
  const [form, setForm] = useState({ name: "", email: "", password: "" });
  const { busy, error, submit } = useAuthSubmit(
    () =>
      authClient.signUp.email(
        { name: form.name.trim(), email: form.email.trim(), password: form.password },
        // The server's sign-up rule reads the invite from the body (server/people/auth.ts).
        inviteToken ? { body: { inviteToken } } : undefined,
      ),
    onSignedUp,
  );

  return (
    <form className="auth-form" onSubmit={(e) => void submit(e)} aria-label={submitLabel}>
      <Field label="Name">
        <input
          value={form.name}
          onChange={(e) => setForm({ ...form, name: e.target.value })}
          autoComplete="name"
          required
          maxLength={LIMITS.displayNameChars}
          placeholder="How teammates see you"
        />
      </Field>
      <EmailField value={form.email} onChange={(email) => setForm({ ...form, email })} />
      <PasswordField label="Password" value={form.password} onChange={(password) => setForm({ ...form, password })} fresh />
      <SubmitRow busy={busy} error={error}>
        {submitLabel}
      </SubmitRow>
    </form>
  );
}

export function SignInForm({ onSignedIn }: { onSignedIn: () => Promise<void> }) {
  const [form, setForm] = useState({ email: "", password: "" });
  const { busy, error, submit } = useAuthSubmit(() => authClient.signIn.email({ email: form.email.trim(), password: form.password }), onSignedIn);

  return (
    <form className="auth-form" onSubmit={(e) => void submit(e)} aria-label="Sign in">
      <EmailField value={form.email} onChange={(email) => setForm({ ...form, email })} />
      <PasswordField label="Password" value={form.password} onChange={(password) => setForm({ ...form, password })} />
      <SubmitRow busy={busy} error={error}>
        Sign in
      </SubmitRow>
    </form>
  );
}

/** Where a provider's refusal lands: the sign-in page, which says why (ssoErrorText). */
const SSO_ERROR_PAGE = "/sign-in";

/**
 * Sign in (or make one's account) through the instance's OpenID Connect provider: the browser
 * goes there and comes back to `next`. With an invite, the invite goes along in the sign-in's
 * state (server/people/auth.ts) so the account made on the way back joins its team.
 */
export function SsoButton({ name, next, inviteToken, label }: { name: string; next: string; inviteToken?: string; label?: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function go() {
    setBusy(true);
    setError(null);
    const { error: failed } = await authClient.signIn.social({
      provider: SSO_PROVIDER_ID,
      callbackURL: next,
      errorCallbackURL: `${SSO_ERROR_PAGE}?next=${encodeURIComponent(next)}`,
      // Kept by the server with this sign-in's state; the account made on the way back joins with it.
      ...(inviteToken ? { additionalData: { inviteToken } } : {}),
    });
    // On success the browser is already leaving for the provider.
    if (failed) {
      setError(authErrorText(failed));
      setBusy(false);
    }
  }
  return (
    <div className="sso">
      <Button onClick={() => void go()} disabled={busy}>
        {label ?? `Sign in with ${name}`}
      </Button>
      {error && (
        <Alert>
          {error}
        </Alert>
      )}
    </div>
  );
}

/** A form's submit button and, under it, why the last submit failed. */
function SubmitRow({ busy, error, children }: { busy: boolean; error: string | null; children: ReactNode }) {
  return (
    <>
      <Button type="submit" disabled={busy}>
        {children}
      </Button>
      {error && <Alert>{error}</Alert>}
    </>
  );
}
