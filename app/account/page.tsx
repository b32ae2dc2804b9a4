import { AccountPage } from "~/components/account-page";
import { SignedIn } from "~/components/signed-in";

export default function Page() {
  return (
    <SignedIn>
      <AccountPage />
    </SignedIn>
  );
}
