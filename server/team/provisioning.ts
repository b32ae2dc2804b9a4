import { z } from "zod";
import { asJson, inTx, type Db, type DbOrTx, type Tx } from "../db/client";
import { isTransientDbError } from "../db/errors";
import { AppError, isAppError } from "../errors";
import { asMessageId, asSessionId, newSessionId, type MessageId, type SessionId } from "../ids";
import { boundedText } from "../../shared/input-guard";
import { DEFAULT_TEAM_LIMITS, LIMITS, type TeamLimits } from "../../shared/limits";
import { notifyActivity } from "../db/notify";
import { modelKey } from "../../shared/model-text";
import { ModelChoiceSchema, type ModelChoice } from "../models/choice";
import { enqueue } from "../runtime/inbox";
import { appendEvents } from "../runtime/session-log";
import { completedTurnsSeed } from "../runtime/sessions";
import { recordAction, type HumanActor } from "../people/actions";
import { ref } from "../person-ref";
import { lockTeam, type Membership } from "../members/membership";
import { LEAD_NAME, MemberNameSchema } from "../members/names";
import { listMembers, type MemberView } from "./roster";

// Making a teammate (SPEC.md §5): the name is reserved durably before its session exists, the
// session and its initial task come in a second step that is idempotent, and recovery finishes
// or fails what a crash cut short.

/**
 * A new teammate, as the spawn_teammate tool and the browser take it. The name's rules are
 * MemberNameSchema's (checked by reserveTeammate, so a bad name is TEAM_INVALID_MEMBER_NAME).
 */
export const SpawnInputSchema = z.object({
  name: z.string(),
  description: z.string().trim().min(1).max(LIMITS.memberDescriptionChars),
  prompt: boundedText(LIMITS.promptBytes, "prompt", { trim: true }),
  context: z.enum(["fresh", "fork"]).default("fresh"),
  /** One of the offered models as "provider:model" (`modelKey`); unset, the Lead's. */
  model: z.string().trim().min(1).max(256).optional(),
});
export type SpawnInput = z.output<typeof SpawnInputSchema>;

export interface SpawnOptions {
  limits?: Pick<TeamLimits, "maxMembers">;
  /** What this server offers (models/registry.ts `availableModels`): a spawn may name one of these or the Lead's model. */
  models?: readonly ModelChoice[];
  /** The person adding the teammate from the room (recorded); unset: the Lead spawned it. */
  by?: HumanActor;
}

/** The model a spawn names, or the Lead's; a model not offered is MODEL_UNAVAILABLE (nothing persisted). */
function teammateModel(key: string | undefined, lead: ModelChoice, offered: readonly ModelChoice[]): ModelChoice {
  if (key === undefined) return lead;
  const found = [lead, ...offered].find((m) => modelKey(m) === key);
  if (!found) {
    const names = [...new Set([lead, ...offered].map(modelKey))].join(", ");
    throw new AppError("MODEL_UNAVAILABLE", `Model "${key}" is not offered on this server; name one of: ${names} (or leave model out for the Lead's)`);
  }
  return { provider: found.provider, model: found.model };
}

/**
 * Creates a teammate: `reserveTeammate` (the member row, provisioning, name reserved forever),
 * then `completeProvisioning` (the child session holding its initial task, and `active`, in
 * one transaction). A crash between the two is finished by recovery from the member row alone.
 */
export async function spawnTeammate(db: Db, caller: Membership, input: SpawnInput, opts: SpawnOptions = {}): Promise<MemberView> {
  const name = await reserveTeammate(db, caller, input, opts);
  return provisionOrReport(db, caller.teamId, name, () => completeProvisioning(db, caller.teamId, name));
}

/**
 * Step 1: validates, then commits the member row in `provisioning` with everything needed to
 * finish it later (prompt, fork point, model, and the tool call that asked for it). Refusals
 * persist nothing. Returns the reserved name.
 */
export async function reserveTeammate(
  db: Db,
  caller: Membership,
  input: SpawnInput,
  { limits = DEFAULT_TEAM_LIMITS, models = [], by, tool = null }: SpawnOptions & { tool?: { callKey: string; fence?: (tx: Tx) => Promise<void> } | null } = {},
): Promise<string> {
  if (!caller.isLead) throw new AppError("TEAM_LEAD_REQUIRED", "Only the Lead can spawn teammates");
  const parsed = MemberNameSchema.safeParse(input.name);
  if (!parsed.success) {
    throw new AppError("TEAM_INVALID_MEMBER_NAME", `Invalid teammate name "${input.name}": ${parsed.error.issues[0]?.message}`);
  }
  const { teamId } = caller;
  await inTx(db, async (tx) => {
    await lockTeam(tx, teamId);
    await tool?.fence?.(tx);
    const lead = await tx.session.findUniqueOrThrow({ where: { id: teamId }, select: { model: true } });
    const model = teammateModel(input.model, ModelChoiceSchema.parse(lead.model), models);
    const taken = await tx.teamMember.findUnique({ where: { teamId_name: { teamId, name: input.name } } });
    if (taken) {
      throw new AppError("TEAM_MEMBER_NAME_TAKEN", `The name "${input.name}" is already used in this team (names are never reused)`);
    }
    const count = await tx.teamMember.count({ where: { teamId } });
    if (count >= limits.maxMembers) {
      throw new AppError("TEAM_MEMBER_LIMIT", `This team already has ${count} teammates (limit ${limits.maxMembers})`);
    }
    // A fork teammate starts from the Lead's turns completed before this spawn.
    const cut = input.context === "fork" ? await lastTurnEndSeq(tx, teamId) : null;
    await tx.teamMember.create({
      data: {
        teamId,
        name: input.name,
        sessionId: newSessionId(),
        description: input.description,
        context: input.context,
        phase: "provisioning",
        prompt: input.prompt,
        forkThroughSeq: cut,
        toolCallKey: tool?.callKey ?? null,
        model: asJson(model),
        addedBy: by ? asJson(ref(by.person)) : undefined,
      },
    });
    if (by) await recordAction(tx, by, "teammate_added", { detail: { name: input.name } });
    await notifyActivity(tx, teamId, "team");
  });
  return input.name;
}

async function lastTurnEndSeq(db: DbOrTx, sessionId: string): Promise<number> {
  const row = await db.sessionEvent.findFirst({
    where: { sessionId, kind: "turn_end" },
    orderBy: { seq: "desc" },
    select: { seq: true },
  });
  return row?.seq ?? 0;
}

const ProvisioningRows = z.array(
  z.object({
    sessionId: z.string(),
    phase: z.string(),
    prompt: z.string().nullable(),
    context: z.string(),
    forkThroughSeq: z.number().int().nullable(),
    model: ModelChoiceSchema.nullable(),
  }),
);

/**
 * Step 2, idempotent and safe to run from several processes at once (the member row is locked):
 * creates the child session if missing, gives it its initial task if it holds none, and marks
 * the member active — all in one transaction. A member that is no longer provisioning is left
 * as it is. A member without a stored prompt (reserved by an older version) cannot be finished
 * and fails. Returns the member's view.
 */
export async function completeProvisioning(db: DbOrTx, teamId: SessionId, name: string): Promise<MemberView> {
  await inTx(db, async (tx) => {
    const rows = ProvisioningRows.parse(
      await tx.$queryRaw`SELECT session_id AS "sessionId", phase, prompt, context, fork_through_seq AS "forkThroughSeq", model
        FROM team_members WHERE team_id = ${teamId} AND name = ${name} FOR UPDATE`,
    );
    const m = rows[0];
    if (!m) throw new AppError("TEAM_MEMBER_NOT_FOUND", `No teammate named "${name}"`);
    if (m.phase !== "provisioning") return;
    const childId = asSessionId(m.sessionId);
    const taskId = initialTaskId(childId);
    const holdsTask =
      (await tx.inboxItem.count({ where: { sessionId: childId, id: taskId } })) > 0 ||
      (await tx.sessionEvent.count({ where: { sessionId: childId, messageId: taskId } })) > 0;
    if (holdsTask) return settleMember(tx, teamId, name, "active", null);
    if (m.prompt === null) {
      await settleMember(tx, teamId, name, "failed", "Provisioning was interrupted before the teammate received its task");
      return;
    }
    const child = await tx.session.findUnique({ where: { id: childId }, select: { id: true } });
    if (!child) {
      const lead = await tx.session.findUniqueOrThrow({ where: { id: teamId }, select: { model: true, optionalContext: true } });
      const fork = m.context === "fork";
      await tx.session.create({
        data: {
          id: childId,
          teamId,
          memberName: name,
          title: name,
          // The model the spawn chose; older rows without one: the Lead's.
          model: asJson(m.model ?? lead.model),
          optionalContext: lead.optionalContext,
          forkedFromId: fork ? teamId : null,
        },
      });
      const cut = m.forkThroughSeq ?? 0;
      if (fork && cut > 0) await appendEvents(tx, childId, (await completedTurnsSeed(tx, teamId, cut)).seed, null);
    }
    // The initial task holds only the task text; identity comes from runtime context.
    await enqueue(tx, childId, {
      id: taskId,
      mode: "queue",
      text: m.prompt,
      source: { kind: "team", teamId, messageId: taskId, senderSessionId: teamId, senderName: LEAD_NAME },
    });
    await settleMember(tx, teamId, name, "active", null);
  });
  return memberView(db, teamId, name);
}

/**
 * Runs the provisioning step and reports the member as it then is: a real failure (the
 * database refused the child) settles it `failed` with the reason; a temporary one (the
 * database went away) leaves it provisioning for recovery to finish — never `failed`.
 */
export async function provisionOrReport(
  db: Db,
  teamId: SessionId,
  name: string,
  complete: () => Promise<MemberView>,
): Promise<MemberView> {
  try {
    return await complete();
  } catch (e) {
    if (isAppError(e, "LEASE_LOST") || isTransientDbError(e)) throw e;
    await settleMember(db, teamId, name, "failed", `Provisioning failed: ${lastLine(e)}`).catch(() => undefined);
    return memberView(db, teamId, name);
  }
}

/** The last line of an error's message (Prisma puts the database's own words there). */
function lastLine(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  return message.split("\n").filter(Boolean).at(-1) ?? message;
}

async function memberView(db: DbOrTx, teamId: SessionId, name: string): Promise<MemberView> {
  const view = (await listMembers(db, teamId)).find((m) => m.name === name);
  if (!view) throw new AppError("TEAM_PROVISIONING_CONFLICT", `Teammate "${name}" vanished during provisioning`);
  return view;
}

/** The member a spawn_teammate call reserved, if its reservation committed. */
export async function memberByToolCall(db: DbOrTx, toolCallKey: string): Promise<{ teamId: SessionId; name: string } | null> {
  const m = await db.teamMember.findUnique({ where: { toolCallKey }, select: { teamId: true, name: true } });
  return m ? { teamId: asSessionId(m.teamId), name: m.name } : null;
}

/** The message id of a teammate's initial task: known in advance, so recovery can look for it. */
export function initialTaskId(childId: SessionId): MessageId {
  return asMessageId(`msg_task_${childId}`);
}

const SettledRows = z.array(z.object({ session_id: z.string() }));

/**
 * provisioning → active | failed; no other transition. A failed member's session (if one
 * exists) is marked failed too, so every view shows it and no process ever drives it.
 */
async function settleMember(db: DbOrTx, teamId: string, name: string, phase: "active" | "failed", diagnostic: string | null) {
  const rows = SettledRows.parse(
    await db.$queryRaw`UPDATE team_members SET phase = ${phase}, diagnostic = ${diagnostic}, updated_at = now()
      WHERE team_id = ${teamId} AND name = ${name} AND phase = 'provisioning' RETURNING session_id`,
  );
  const row = rows[0];
  if (!row) throw new AppError("TEAM_PROVISIONING_CONFLICT", `Teammate "${name}" is no longer provisioning`);
  if (phase === "failed") await db.$executeRaw`UPDATE sessions SET status = 'failed' WHERE id = ${row.session_id}`;
  await notifyActivity(db, teamId, "team");
}

/**
 * Finishes members a crash (or a database outage) left in provisioning, from the member row
 * and the child's persisted session alone (no model call). Returns how many it settled.
 */
export async function recoverProvisioning(db: Db, olderThanMs = 0, giveUpAfterMs = PROVISIONING_GIVE_UP_MS): Promise<number> {
  const stuck = await db.teamMember.findMany({
    where: { phase: "provisioning", updatedAt: { lt: new Date(Date.now() - olderThanMs) } },
    select: { teamId: true, name: true, createdAt: true },
  });
  let settled = 0;
  for (const m of stuck) {
    const teamId = asSessionId(m.teamId);
    const view = await provisionOrReport(db, teamId, m.name, () => completeProvisioning(db, teamId, m.name)).catch(async (e: unknown) => {
      // Temporary failures are retried on every sweep, but not forever: a member that could
      // not be finished for this long fails, so nobody waits on it for good.
      if (Date.now() - m.createdAt.getTime() < giveUpAfterMs) return null;
      await settleMember(db, teamId, m.name, "failed", `Provisioning could not finish: ${lastLine(e)}`).catch(() => undefined);
      return memberView(db, teamId, m.name).catch(() => null);
    });
    if (view && view.phase !== "provisioning") settled += 1;
  }
  return settled;
}

/** How long recovery keeps retrying a spawn that fails for temporary reasons. */
export const PROVISIONING_GIVE_UP_MS = 10 * 60_000;
