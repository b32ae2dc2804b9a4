import { TeamHome } from "~/components/team-home";

export default function HomePage() {
  return <TeamHome />;
}
