"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { InlineError } from "../ui/alert";
import { Skeleton } from "../ui/skeleton";
import type { MemoryView } from "../api-types";
import { MemoryBody, MemoryControls } from "./memory-panel";

// The instance's shared memory on the Account page of its owner (SPEC.md §20): what every team
// that reads the shared memory lets its agents find. The owner shares a team's memory into it
// from that team's Memory tab, and edits or deletes it here.

export function SharedMemory() {
  const trpc = useTRPC();
  const list = useQuery(trpc.memory.sharedList.queryOptions());
  return (
    <section aria-labelledby="shared-memory" className="card panel-section">
      <h2 id="shared-memory">Shared memory</h2>
      <p className="muted hint">
        Memories every team can read once its owner turns on &ldquo;Agents also read the instance&apos;s shared memory&rdquo;. Share one from a team&apos;s
        Memory tab.
      </p>
      {list.error && <InlineError onRetry={() => void list.refetch()}>The shared memory could not be read: {list.error.message}</InlineError>}
      {!list.data && !list.error && <Skeleton label="Loading the shared memory…" rows={1} />}
      {list.data?.length === 0 && <p className="muted">Nothing shared yet.</p>}
      <ul className="item-list" aria-label="Shared memories">
        {list.data?.map((m) => (
          <li key={m.id} className="item-card" aria-label={`Shared memory: ${m.text.slice(0, 60)}`}>
            <MemoryBody m={m} />
            <SharedControls m={m} onDone={() => void list.refetch()} />
          </li>
        ))}
      </ul>
    </section>
  );
}

function SharedControls({ m, onDone }: { m: MemoryView; onDone: () => void }) {
  const trpc = useTRPC();
  const edit = useMutation(trpc.memory.sharedEdit.mutationOptions({ onSettled: onDone }));
  const remove = useMutation(trpc.memory.sharedDelete.mutationOptions({ onSettled: onDone }));
  return (
    <MemoryControls
      m={m}
      save={(e) => edit.mutateAsync({ memoryId: m.id, ...e })}
      remove={() => remove.mutate({ memoryId: m.id })}
      pending={edit.isPending || remove.isPending}
      error={edit.error ?? remove.error}
    />
  );
}
