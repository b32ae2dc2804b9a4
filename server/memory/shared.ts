import { inTx, type Db } from "../db/client";
import { AppError } from "../errors";
import { recordAudit } from "../people/audit";
import type { Person } from "../people/person";
import { ref } from "../person-ref";
import { decideMemory, deleteMemory, editMemory, getMemory, proposeMemory, type MemoryView } from "./store";

// The instance's shared memory (SPEC.md §20): what every team that opts in lets its agents read.
// Its owner curates it: shares an approved team memory into it (a copy, approved by them, whose
// source stays the step that learned it), edits and deletes what is there. Each change and its
// audit entry commit together. Who may (the instance's owner) is the caller's check.

/**
 * Copies an approved team memory into the shared memory. Sharing the same version again
 * returns the copy it made (the copy is keyed by the memory and its version).
 */
export async function shareMemory(db: Db, owner: Person, teamId: string, memoryId: string): Promise<MemoryView> {
  return inTx(db, async (tx) => {
    const m = await getMemory(tx, teamId, memoryId);
    if (m.status !== "approved") throw new AppError("MEMORY_CONFLICT", `This memory is ${m.status}; only an approved memory is shared`, { memoryId, status: m.status });
    const { memory, again } = await proposeMemory(tx, { teamId: null, text: m.text, tags: m.tags, by: m.proposedBy.kind === "member" ? { ...m.proposedBy, teamId } : m.proposedBy, callKey: `share:${m.id}:v${m.version}` });
    if (again) {
      if (memory.status === "deleted") throw new AppError("MEMORY_CONFLICT", "This version was shared before and its shared copy was deleted; edit the memory to share it again", { memoryId });
      return memory;
    }
    const shared = await decideMemory(tx, null, memory.id, ref(owner), { approve: true });
    await recordAudit(tx, { kind: "memory_shared", actor: ref(owner), teamId, detail: { memoryId, sharedId: shared.id, text: shared.text } });
    return shared;
  });
}

export async function editSharedMemory(db: Db, owner: Person, memoryId: string, edit: { text: string; tags: readonly string[] }): Promise<MemoryView> {
  return inTx(db, async (tx) => {
    const m = await editMemory(tx, null, memoryId, ref(owner), edit);
    await recordAudit(tx, { kind: "memory_edited", actor: ref(owner), detail: { memoryId, version: m.version, shared: true } });
    return m;
  });
}

export async function deleteSharedMemory(db: Db, owner: Person, memoryId: string): Promise<void> {
  await inTx(db, async (tx) => {
    const m = await deleteMemory(tx, null, memoryId);
    await recordAudit(tx, { kind: "memory_deleted", actor: ref(owner), detail: { memoryId, status: m.status, text: m.text, shared: true } });
  });
}
