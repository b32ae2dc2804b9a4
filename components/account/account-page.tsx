"use client";

import { SharedMemory } from "../memory/shared-memory";
import { Link } from "../ui/link";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import type { AccountStatus } from "../api-types";
import { authClient, authErrorText } from "./auth-client";
import { CopyButton } from "../copy-button";
import { useTRPC } from "../trpc";
import { leaveToSignIn, useAccountStatus } from "./use-account";
import { LIMITS } from "~/shared/limits";
import { PasswordField } from "../form-fields";
import { InstanceToolDefaults } from "../control/tool-policy";
import { SettingCheckbox } from "../ui/setting-checkbox";
import { Button } from "../ui/button";
import { Alert, ErrorAlert } from "../ui/alert";
import { Check, Field } from "../ui/field";

// /account: display name, password, signing out (here or everywhere), personal API tokens,
// and, for the instance's owner, whether anyone may sign up.

type Me = NonNullable<AccountStatus["me"]>;

export function AccountPage() {
  const status = useAccountStatus();
  const me = status.data?.me;
  if (!me || !status.data) return null;
  return (
    <main className="page narrow">
      <h1>Your account</h1>
      <p className="muted">
        Signed in as {me.name} ({me.email}){me.instanceOwner ? " · owner of this instance" : ""}
      </p>
      <DisplayName me={me} />
      <PasswordChange />
      <SignOut />
      <ApiTokens />
      <section aria-labelledby="audit" className="card">
        <h2 id="audit">Audit log</h2>
        <p className="muted">
          Sign-ins, API tokens and changes to who may do what: the whole instance for its owner, their teams for team owners.{" "}
          <Link href="/audit">Open the audit log</Link>
        </p>
      </section>
      {me.instanceOwner && <InstanceSettings openSignUp={status.data.openSignUp} />}
      {me.instanceOwner && <InstanceToolDefaults />}
      {me.instanceOwner && <SharedMemory />}
    </main>
  );
}

function Outcome({ error, done }: { error: string | null; done: string | null }) {
  if (error) {
    return (
      <Alert>
        {error}
      </Alert>
    );
  }
  return done ? (
    <p role="status" className="muted">
      {done}
    </p>
  ) : null;
}

function DisplayName({ me }: { me: Me }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState(me.name);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  async function submit(e: FormEvent) {
    e.preventDefault();
    setError(null);
    setDone(null);
    const { error: failed } = await authClient.updateUser({ name: name.trim() });
    if (failed) return setError(authErrorText(failed));
    await queryClient.invalidateQueries();
    setDone("Name saved. New prompts carry it; earlier ones keep the name they were sent with.");
  }
  return (
    <section aria-labelledby="name" className="card">
      <h2 id="name">Display name</h2>
      <form className="row" onSubmit={(e) => void submit(e)}>
        <Field label="Display name" className="grow">
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={LIMITS.displayNameChars} autoComplete="name" />
        </Field>
        <Button type="submit" disabled={!name.trim() || name.trim() === me.name}>
          Save name
        </Button>
      </form>
      <Outcome error={error} done={done} />
    </section>
  );
}

function PasswordChange() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const revokeTokens = useMutation(trpc.account.revokeAllTokens.mutationOptions());
  const [form, setForm] = useState({ current: "", next: "", signOutOthers: true, revokeTokens: false });
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  async function submit(e: FormEvent) {
    e.preventDefault();
    setError(null);
    setDone(null);
    const { error: failed } = await authClient.changePassword({
      currentPassword: form.current,
      newPassword: form.next,
      revokeOtherSessions: form.signOutOthers,
    });
    if (failed) return setError(failed.code === "INVALID_PASSWORD" ? "The current password is wrong" : authErrorText(failed));
    setForm({ ...form, current: "", next: "" });
    const ended = [form.signOutOthers && "your other devices are signed out", form.revokeTokens && "your API tokens are revoked"].filter(Boolean);
    if (form.revokeTokens) {
      try {
        await revokeTokens.mutateAsync();
      } catch {
        return setError("Password changed, but your API tokens could not be revoked: revoke them below");
      } finally {
        await queryClient.invalidateQueries({ queryKey: trpc.account.tokens.queryKey() });
      }
    }
    setDone(ended.length > 0 ? `Password changed; ${ended.join(" and ")}.` : "Password changed.");
  }
  return (
    <section aria-labelledby="password" className="card">
      <h2 id="password">Password</h2>
      <form className="stack" onSubmit={(e) => void submit(e)}>
        <PasswordField label="Current password" value={form.current} onChange={(current) => setForm({ ...form, current })} />
        <PasswordField label="New password" value={form.next} onChange={(next) => setForm({ ...form, next })} fresh />
        <Check checked={form.signOutOthers} onChange={(e) => setForm({ ...form, signOutOthers: e.target.checked })}>
          Sign out other devices
        </Check>
        <Check checked={form.revokeTokens} onChange={(e) => setForm({ ...form, revokeTokens: e.target.checked })}>
          Revoke my API tokens too
        </Check>
        <Button type="submit">Change password</Button>
      </form>
      <Outcome error={error} done={done} />
    </section>
  );
}

function SignOut() {
  const [error, setError] = useState<string | null>(null);
  async function signOut(everywhere: boolean) {
    setError(null);
    // Everywhere: every session of the account ends (other browsers, other devices), then this one.
    if (everywhere) {
      const { error: failed } = await authClient.revokeSessions();
      if (failed) return setError(authErrorText(failed));
    }
    await authClient.signOut();
    leaveToSignIn();
  }
  return (
    <section aria-labelledby="sessions" className="card">
      <h2 id="sessions">Signing out</h2>
      <div className="row">
        <Button variant="secondary" onClick={() => void signOut(false)}>
          Sign out
        </Button>
        <Button variant="danger" onClick={() => void signOut(true)}>
          Sign out everywhere
        </Button>
      </div>
      <p className="muted">Everywhere ends every session of this account, on every device, and revokes its API tokens: scripts using them stop.</p>
      <Outcome error={error} done={null} />
    </section>
  );
}

function ApiTokens() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const tokens = useQuery(trpc.account.tokens.queryOptions());
  const [name, setName] = useState("");
  const refetch = () => queryClient.invalidateQueries({ queryKey: trpc.account.tokens.queryKey() });
  const create = useMutation(trpc.account.createToken.mutationOptions({ onSuccess: () => void refetch() }));
  const revoke = useMutation(trpc.account.revokeToken.mutationOptions({ onSuccess: () => void refetch() }));
  const created = create.data;
  return (
    <section aria-labelledby="tokens" className="card">
      <h2 id="tokens">API tokens</h2>
      <p className="muted">
        For scripts: a token acts with your rights, sent as <code>Authorization: Bearer &lt;token&gt;</code>.
      </p>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          if (name.trim()) create.mutate({ name: name.trim() }, { onSuccess: () => setName("") });
        }}
      >
        <Field label="Token name" className="grow">
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={LIMITS.tokenNameChars} placeholder="What the script is" />
        </Field>
        <Button type="submit" disabled={!name.trim() || create.isPending}>
          Create token
        </Button>
      </form>
      {created && (
        <div className="secret" role="group" aria-label="New API token">
          <p>
            <strong>Copy it now:</strong> this token is shown only once.
          </p>
          <div className="row">
            <Field label={`Token ${created.name}`} className="grow">
              <input readOnly value={created.token} onFocus={(e) => e.target.select()} />
            </Field>
            <CopyButton text={created.token} label="Copy token" />
          </div>
        </div>
      )}
      <ErrorAlert error={create.error} />
      {tokens.data?.length === 0 && <p className="muted">No tokens.</p>}
      <ul className="plain-list" aria-label="Your API tokens">
        {tokens.data?.map((t) => (
          <li key={t.id}>
            <span className="grow">
              <strong>{t.name}</strong> <code>{t.prefix}…</code>
              <span className="muted">
                {" "}
                · created {new Date(t.createdAt).toLocaleString()} · {t.lastUsedAt ? `last used ${new Date(t.lastUsedAt).toLocaleString()}` : "never used"}
              </span>
            </span>
            <Button variant="danger" onClick={() => revoke.mutate({ id: t.id })} aria-label={`Revoke ${t.name}`}>
              Revoke
            </Button>
          </li>
        ))}
      </ul>
      <ErrorAlert error={revoke.error} />
    </section>
  );
}

function InstanceSettings({ openSignUp }: { openSignUp: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const set = useMutation(
    trpc.account.setOpenSignUp.mutationOptions({ onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.account.status.queryKey() }) }),
  );
  return (
    <section aria-labelledby="instance" className="card">
      <h2 id="instance">This instance</h2>
      <SettingCheckbox saved={openSignUp} pending={set.isPending} save={(open) => set.mutateAsync({ open })}>
        Anyone can sign up
      </SettingCheckbox>
      <p className="muted">
        {openSignUp
          ? "Anyone who reaches this server can make an account (they see only the teams they are invited to)."
          : "Sign-up is by invitation: a new person needs a team's invite link."}
      </p>
      <ErrorAlert error={set.error} />
      <PrivateWebhooks />
    </section>
  );
}

/** Whether team webhooks may reach private addresses (off: a webhook cannot probe the server's own network). */
function PrivateWebhooks() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const settings = useQuery(trpc.account.instanceSettings.queryOptions());
  const set = useMutation(
    trpc.account.setWebhooksPrivateOk.mutationOptions({ onSuccess: (saved) => queryClient.setQueryData(trpc.account.instanceSettings.queryKey(), saved) }),
  );
  if (!settings.data) return null;
  return (
    <>
      <SettingCheckbox saved={settings.data.webhooksPrivateOk} pending={set.isPending} save={(allowed) => set.mutateAsync({ allowed })}>
        Webhooks and MCP servers may reach private addresses
      </SettingCheckbox>
      <p className="muted">
        {settings.data.webhooksPrivateOk
          ? "Team webhooks may post to loopback and local-network addresses (a receiver next to this server)."
          : "Team webhooks post only to public addresses, so nobody can use one to reach this server's own network."}
      </p>
      <ErrorAlert error={set.error} />
    </>
  );
}
