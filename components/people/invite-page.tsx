"use client";

import { useState } from "react";
import { InviteSignUp, JoinTeam } from "./invite";
import { useAccountStatus } from "../account/use-account";

/** /invite/<token> (and /sign-up?invite=<token>): a Join button when signed in, else an account made with the invite. */
export function InvitePage({ token }: { token: string }) {
  const status = useAccountStatus();
  // Once an account was made here, this page stays on it until the team opens.
  const [joining, setJoining] = useState(false);
  if (!status.data) {
    return (
      <main className="page narrow">
        <p className="muted">Loading…</p>
      </main>
    );
  }
  if (joining || !status.data.me) return <InviteSignUp token={token} onJoining={() => setJoining(true)} />;
  return <JoinTeam token={token} />;
}
