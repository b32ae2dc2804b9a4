import { Suspense } from "react";
import { SignedIn } from "~/components/account/signed-in";
import { RoomLoading, TeamRoom } from "~/components/room/team-room";

export default async function TeamPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return (
    <Suspense fallback={<RoomLoading />}>
      <SignedIn placeholder={<RoomLoading />}>
        {/* Keyed: moving to another team (a fork) starts a new room, with its own presence. */}
        <TeamRoom key={id} teamId={id} />
      </SignedIn>
    </Suspense>
  );
}
