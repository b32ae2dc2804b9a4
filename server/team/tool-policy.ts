import { z } from "zod";
import { inTx, type Db, type Tx } from "../db/client";
import type { SqlRunner } from "../db/sql";
import { AppError } from "../errors";
import type { SessionId } from "../ids";
import { notifyActivity } from "../db/notify";
import { recordAction, type HumanActor } from "../people/actions";
import { TOOL_MODES, type ToolMode } from "../runtime/approvals";

// Each team's tool policy (SPEC.md §17): allow, ask (a person approves each call) or off (the
// tool leaves every member's list). A tool without a row has its default: every built-in
// tool is allowed, an MCP tool allowed when its server marks it read-only and asks otherwise
// (mcp/toolset.ts). Owners change it; each change is attributed. A new team starts with the
// instance owner's defaults (startingToolPolicy). This module is the table's one writer.

export const ToolModeSchema = z.enum(TOOL_MODES);

/** Built-in tools start allowed (MCP tools bring their own defaults). */
export const DEFAULT_TOOL_MODE: ToolMode = "allow";

const ModeRows = z.array(z.object({ tool_name: z.string(), mode: ToolModeSchema }));

/** The policy of the team the session belongs to: only tools whose mode is not the default. */
export async function toolModesOfSession(db: SqlRunner, sessionId: SessionId): Promise<ReadonlyMap<string, ToolMode>> {
  const rows = ModeRows.parse(
    await db.$queryRaw`SELECT p.tool_name, p.mode FROM tool_policies p JOIN sessions s ON s.team_id = p.team_id WHERE s.id = ${sessionId}`,
  );
  return new Map(rows.map((r) => [r.tool_name, r.mode]));
}

/** Every tool of the team's list with its mode (the settings' table); unnamed, a tool has its default. */
export async function toolPolicyOf(
  db: SqlRunner,
  teamId: SessionId,
  tools: readonly { name: string; defaultMode: ToolMode }[],
): Promise<{ tool: string; mode: ToolMode }[]> {
  const rows = ModeRows.parse(await db.$queryRaw`SELECT tool_name, mode FROM tool_policies WHERE team_id = ${teamId}`);
  const set = new Map(rows.map((r) => [r.tool_name, r.mode]));
  return tools.map((t) => ({ tool: t.name, mode: set.get(t.name) ?? t.defaultMode }));
}

/** A new team's tool policy: the instance owner's defaults, copied (later changes to them leave it alone). */
export async function startingToolPolicy(tx: SqlRunner, teamId: string): Promise<void> {
  await tx.$executeRaw`INSERT INTO tool_policies (team_id, tool_name, mode, changed_by)
    SELECT ${teamId}, tool_name, mode, changed_by FROM instance_tool_defaults ON CONFLICT DO NOTHING`;
}

/** Sets one tool's mode in the team (attributed); a tool not in the team's list is refused. */
export async function setToolMode(db: Db, by: HumanActor, toolNames: readonly string[], tool: string, mode: ToolMode): Promise<void> {
  if (!toolNames.includes(tool)) throw new AppError("TOOL_NOT_FOUND", `No tool named "${tool}" in this team`, { tool });
  await inTx(db, (tx) => writeToolMode(tx, by, tool, mode));
}

/** In the caller's transaction: the mode, who set it, and the room told (also "always allow"). */
export async function writeToolMode(tx: Tx, by: HumanActor, tool: string, mode: ToolMode): Promise<void> {
  await tx.$executeRaw`INSERT INTO tool_policies (team_id, tool_name, mode, changed_by) VALUES (${by.teamId}, ${tool}, ${mode}, ${JSON.stringify({ id: by.person.id, name: by.person.name })}::jsonb)
    ON CONFLICT (team_id, tool_name) DO UPDATE SET mode = EXCLUDED.mode, changed_by = EXCLUDED.changed_by, updated_at = now()`;
  await recordAction(tx, by, "tool_policy_set", { detail: { tool, mode } });
  await notifyActivity(tx, by.teamId, "team");
}

const ExpiryRows = z.array(z.object({ approval_expiry_minutes: z.number().int().nullable() }));

/** How long the team's requests wait before they expire (null: for ever). */
export async function approvalExpiryOf(db: SqlRunner, teamId: SessionId): Promise<number | null> {
  return ExpiryRows.parse(await db.$queryRaw`SELECT approval_expiry_minutes FROM teams WHERE id = ${teamId}`)[0]?.approval_expiry_minutes ?? null;
}

/** Sets it (owners; attributed); requests already waiting are measured from when they were made. */
export async function setApprovalExpiry(db: Db, by: HumanActor, minutes: number | null): Promise<void> {
  await inTx(db, async (tx) => {
    await tx.$executeRaw`UPDATE teams SET approval_expiry_minutes = ${minutes} WHERE id = ${by.teamId}`;
    await recordAction(tx, by, "tool_policy_set", { detail: { expiryMinutes: minutes } });
    await notifyActivity(tx, by.teamId, "team");
  });
}

/** The instance's defaults for new teams: every tool of the list with the mode a new team starts with. */
export async function instanceToolDefaults(db: SqlRunner, toolNames: readonly string[]): Promise<{ tool: string; mode: ToolMode }[]> {
  const rows = ModeRows.parse(await db.$queryRaw`SELECT tool_name, mode FROM instance_tool_defaults`);
  const set = new Map(rows.map((r) => [r.tool_name, r.mode]));
  return toolNames.map((tool) => ({ tool, mode: set.get(tool) ?? DEFAULT_TOOL_MODE }));
}

/** The instance owner sets the mode a tool has in teams created from now on (attributed on the row). */
export async function setInstanceToolDefault(db: SqlRunner, by: { id: string; name: string }, toolNames: readonly string[], tool: string, mode: ToolMode): Promise<void> {
  if (!toolNames.includes(tool)) throw new AppError("TOOL_NOT_FOUND", `No tool named "${tool}" on this server`, { tool });
  await db.$executeRaw`INSERT INTO instance_tool_defaults (tool_name, mode, changed_by) VALUES (${tool}, ${mode}, ${JSON.stringify({ id: by.id, name: by.name })}::jsonb)
    ON CONFLICT (tool_name) DO UPDATE SET mode = EXCLUDED.mode, changed_by = EXCLUDED.changed_by, updated_at = now()`;
}
