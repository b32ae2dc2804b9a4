import { SignedIn } from "~/components/signed-in";
import { TeamHome } from "~/components/team-home";

export default function HomePage() {
  return (
    <SignedIn>
      <TeamHome />
    </SignedIn>
  );
}
