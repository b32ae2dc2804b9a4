import { AuditPage } from "~/components/control/audit-log";
import { SignedIn } from "~/components/account/signed-in";

export default function Page() {
  return (
    <SignedIn>
      <AuditPage />
    </SignedIn>
  );
}
