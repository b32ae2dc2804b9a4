import { AccountPage } from "~/components/account/account-page";
import { SignedIn } from "~/components/account/signed-in";

export default function Page() {
  return (
    <SignedIn>
      <AccountPage />
    </SignedIn>
  );
}
