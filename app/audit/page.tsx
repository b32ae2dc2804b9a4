import { AuditPage } from "~/components/audit-log";
import { SignedIn } from "~/components/signed-in";

export default function Page() {
  return (
    <SignedIn>
      <AuditPage />
    </SignedIn>
  );
}
