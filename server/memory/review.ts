import { z } from "zod";
import { inTx, type Db } from "../db/client";
import { LIMITS } from "../../shared/limits";
import type { SessionId } from "../ids";
import { recordAction, type HumanActor } from "../people/actions";
import { ref } from "../person-ref";
import { decideMemory, deleteMemory, editMemory, type Decision, type MemoryView } from "./store";

// What people do to a team's memory, attributed: each change and its record in the team's
// actions (and so the audit log) commit together, and the person's role is checked again inside
// that transaction (people/actions.ts). Members decide, edit and delete; owners set the team's
// memory settings.

export async function decideTeamMemory(db: Db, by: HumanActor, memoryId: string, d: Decision): Promise<MemoryView> {
  return inTx(db, async (tx) => {
    const m = await decideMemory(tx, by.teamId, memoryId, ref(by.person), d);
    await recordAction(tx, by, "memory_decided", { detail: { memoryId, approved: d.approve, ...(d.edit ? { edited: true } : {}), ...(d.note ? { note: d.note } : {}) } });
    return m;
  });
}

export async function editTeamMemory(db: Db, by: HumanActor, memoryId: string, edit: { text: string; tags: readonly string[] }): Promise<MemoryView> {
  return inTx(db, async (tx) => {
    const m = await editMemory(tx, by.teamId, memoryId, ref(by.person), edit);
    await recordAction(tx, by, "memory_edited", { detail: { memoryId, version: m.version } });
    return m;
  });
}

export async function deleteTeamMemory(db: Db, by: HumanActor, memoryId: string): Promise<void> {
  await inTx(db, async (tx) => {
    const m = await deleteMemory(tx, by.teamId, memoryId);
    // The text goes into the record: the audit log keeps what was deleted.
    await recordAction(tx, by, "memory_deleted", { detail: { memoryId, status: m.status, text: m.text } });
  });
}

export const MemorySettingsSchema = z.object({
  /** Proposals are approved as they come. */
  autoApprove: z.boolean(),
  /** The team's agents read the instance's shared memory too. */
  shared: z.boolean(),
  /** Tokens of each agent's context the relevant memories may take (0: none). */
  contextTokens: z.number().int().min(0).max(LIMITS.memoryContextTokens),
});
export type MemorySettings = z.infer<typeof MemorySettingsSchema>;

export async function memorySettingsOf(db: Db, teamId: SessionId): Promise<MemorySettings> {
  const t = await db.team.findUniqueOrThrow({ where: { id: teamId }, select: { memoryAutoApprove: true, memoryShared: true, memoryContextTokens: true } });
  return { autoApprove: t.memoryAutoApprove, shared: t.memoryShared, contextTokens: t.memoryContextTokens };
}

/** Changes the settings given (the others stay as they are). */
export async function setMemorySettings(db: Db, by: HumanActor, s: Partial<MemorySettings>): Promise<void> {
  await inTx(db, async (tx) => {
    await tx.team.update({ where: { id: by.teamId }, data: { memoryAutoApprove: s.autoApprove, memoryShared: s.shared, memoryContextTokens: s.contextTokens } });
    await recordAction(tx, by, "memory_settings_set", { detail: s });
  });
}
