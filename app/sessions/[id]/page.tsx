import { redirect } from "next/navigation";

// Older links: a session is shown in its team's room.
export default async function SessionPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  redirect(`/teams/${id}`);
}
