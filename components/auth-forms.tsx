"use client";

import { useState, type FormEvent } from "react";
import { LIMITS } from "~/server/limits";
import { authClient, authErrorText, type AuthFailure } from "./auth-client";
import { EmailField, PasswordField } from "./form-fields";

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
      <label>
        <span className="label">Name</span>
        <input
          value={form.name}
          onChange={(e) => setForm({ ...form, name: e.target.value })}
          autoComplete="name"
          required
          maxLength={LIMITS.displayNameChars}
          placeholder="How teammates see you"
        />
      </label>
      <EmailField value={form.email} onChange={(email) => setForm({ ...form, email })} />
      <PasswordField label="Password" value={form.password} onChange={(password) => setForm({ ...form, password })} fresh />
      <button type="submit" disabled={busy}>
        {submitLabel}
      </button>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
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
      <button type="submit" disabled={busy}>
        Sign in
      </button>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </form>
  );
}
