import { SessionHome } from "~/components/session-home";

export default function HomePage() {
  return <SessionHome />;
}
