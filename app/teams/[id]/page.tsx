import { Suspense } from "react";
import { TeamRoom } from "~/components/team-room";

export default async function TeamPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return (
    <Suspense>
      <TeamRoom teamId={id} />
    </Suspense>
  );
}
