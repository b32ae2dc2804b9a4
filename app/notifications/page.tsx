import { NotificationsPage } from "~/components/account/notifications";
import { SignedIn } from "~/components/account/signed-in";

export default function Page() {
  return (
    <SignedIn>
      <NotificationsPage />
    </SignedIn>
  );
}
