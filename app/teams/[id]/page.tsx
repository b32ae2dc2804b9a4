import { Suspense } from "react";
import { SignedIn } from "~/components/signed-in";
import { TeamRoom } from "~/components/team-room";

export default async function TeamPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return (
    <Suspense>
      <SignedIn>
        <TeamRoom teamId={id} />
      </SignedIn>
    </Suspense>
  );
}
