import { NotificationsPage } from "~/components/notifications";
import { SignedIn } from "~/components/signed-in";

export default function Page() {
  return (
    <SignedIn>
      <NotificationsPage />
    </SignedIn>
  );
}
