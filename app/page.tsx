import { SignedIn } from "~/components/account/signed-in";
import { TeamHome } from "~/components/team-home";

export default function HomePage() {
  return (
    <SignedIn>
      <TeamHome />
    </SignedIn>
  );
}
